/* Generated from schemas/agent-models.result.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/models result: the provider's models, the one a chat uses without `model`, and why the list is
 * only the configured model when listing failed.
 */
export interface ModelsResult {
  default: string;
  error?: string | null;
  models: ModelEntry[];
}
export interface ModelEntry {
  contextWindow?: number | null;
  displayName?: string | null;
  id: string;
  provider: string;
}
