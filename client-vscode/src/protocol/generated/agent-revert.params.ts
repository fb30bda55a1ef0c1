/* Generated from schemas/agent-revert.params.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/revert params: undo the last chat's edits, or those of every chat after the first `toChat`.
 */
export interface RevertParams {
  sessionId: string;
  toChat?: number | null;
}
