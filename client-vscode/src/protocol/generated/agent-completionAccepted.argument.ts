/* Generated from schemas/agent-completionAccepted.argument.json by scripts/gen-types.mjs — do not edit. */

/**
 * The one argument of the command `agent.completionAccepted` that an inline completion item carries.
 */
export interface CompletionAcceptedArgument {
  id: number;
}
