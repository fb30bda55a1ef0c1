/* Generated from schemas/agent-diagnostics.result.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/diagnostics (server -> client) result.
 */
export interface DiagnosticsResult {
  items: FileDiagnostics[];
}
export interface FileDiagnostics {
  diagnostics: {
    [k: string]: unknown;
  }[];
  uri: string;
}
