/* Generated from schemas/agent-revert.result.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/revert result: the documents restored, and those left as they are with the reason.
 */
export interface RevertResult {
  refused: RefusedRevert[];
  reverted: string[];
}
export interface RefusedRevert {
  reason: string;
  uri: string;
}
