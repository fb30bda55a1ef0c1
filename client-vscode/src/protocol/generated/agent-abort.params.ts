/* Generated from schemas/agent-abort.params.json by scripts/gen-types.mjs — do not edit. */

/**
 * Params naming one session: agent/abort, agent/history, agent/deleteSession.
 */
export interface SessionParams {
  sessionId: string;
}
