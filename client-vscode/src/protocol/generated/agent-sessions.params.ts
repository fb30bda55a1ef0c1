/* Generated from schemas/agent-sessions.params.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/sessions params.
 */
export interface SessionsParams {
  workspace?: string | null;
}
