/* Generated from schemas/agent-diagnostics.params.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/diagnostics (server -> client) params.
 */
export interface DiagnosticsParams {
  uris?: string[] | null;
}
