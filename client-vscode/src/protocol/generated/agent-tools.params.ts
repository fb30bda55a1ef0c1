/* Generated from schemas/agent-tools.params.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/tools params (none yet).
 */
export interface ToolsParams {}
