/* Generated from schemas/agent-languageFeature.params.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/languageFeature (server -> client) params: a standard LSP request for the editor's other language
 * servers; the result is that request's result shape (null when none answers).
 */
export interface LanguageFeatureParams {
  method: string;
  params: {
    [k: string]: unknown;
  };
}
