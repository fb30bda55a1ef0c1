/* Generated from schemas/agent-languageStatus.params.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/languageStatus notification params (PROTOCOL §11): how far the editor's language servers have indexed,
 * for the editor's route as a whole; `server` names the one it is about, for the message.
 */
export interface LanguageStatusParams {
  server?: string | null;
  state: 'ready' | 'loading';
}
