/* Generated from schemas/agent-newSession.result.json by scripts/gen-types.mjs — do not edit. */

export interface NewSessionResult {
  sessionId: string;
}
