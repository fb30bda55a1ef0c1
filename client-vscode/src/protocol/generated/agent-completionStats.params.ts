/* Generated from schemas/agent-completionStats.params.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/completionStats params (none yet).
 */
export interface CompletionStatsParams {}
