/* Generated from schemas/agent-completionStats.result.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/completionStats result: suggestions as you type since the server started (PROTOCOL §10).
 */
export interface CompletionStatsResult {
  accepted: number;
  cancelled: number;
  errors: number;
  modelCalls: number;
  nextEdits: NextEditStats;
  partiallyAccepted: number;
  requests: number;
  reused: number;
  shown: number;
  stale: number;
}
/**
 * agent/completionStats `nextEdits`: next-edit suggestions since the server started (PROTOCOL §11).
 */
export interface NextEditStats {
  accepted: number;
  cancelled: number;
  errors: number;
  filtered: number;
  modelCalls: number;
  requests: number;
  shown: number;
  stale: number;
}
