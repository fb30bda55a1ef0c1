/* Generated from schemas/agent-command.argument.json by scripts/gen-types.mjs — do not edit. */

/**
 * The argument of the agent.fix / agent.explain / agent.refactor commands of a code action.
 */
export interface CommandArgument {
  diagnostics?:
    | {
        [k: string]: unknown;
      }[]
    | null;
  instruction?: string | null;
  range: Range;
  uri: string;
}
/**
 * An LSP range.
 */
export interface Range {
  end: Position;
  start: Position;
}
/**
 * Zero-based line and character, as LSP counts them.
 */
export interface Position {
  character: number;
  line: number;
}
