/* Generated from schemas/agent-confirmTool.result.json by scripts/gen-types.mjs — do not edit. */

export interface ConfirmToolResult {
  accepted: true;
}
