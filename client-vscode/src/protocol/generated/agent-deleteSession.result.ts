/* Generated from schemas/agent-deleteSession.result.json by scripts/gen-types.mjs — do not edit. */

export interface DeleteSessionResult {
  deleted: true;
}
