/* Generated from schemas/agent-nextEditAccepted.argument.json by scripts/gen-types.mjs — do not edit. */

/**
 * The one argument of the command `agent.nextEditAccepted` that a copilotInlineEdit edit carries.
 */
export interface NextEditAcceptedArgument {
  id: number;
}
