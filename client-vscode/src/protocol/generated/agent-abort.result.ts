/* Generated from schemas/agent-abort.result.json by scripts/gen-types.mjs — do not edit. */

export interface AbortResult {
  aborted: boolean;
}
