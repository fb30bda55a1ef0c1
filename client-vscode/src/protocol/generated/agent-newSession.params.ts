/* Generated from schemas/agent-newSession.params.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/newSession params.
 */
export interface NewSessionParams {
  title?: string | null;
}
