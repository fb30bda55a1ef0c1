/* Generated from schemas/agent-tools.result.json by scripts/gen-types.mjs — do not edit. */

export interface ToolsResult {
  tools: ToolInfo[];
}
/**
 * One tool the model can be offered.
 */
export interface ToolInfo {
  description: string;
  kind: 'read' | 'search' | 'edit' | 'execute' | 'fetch' | 'other';
  name: string;
  origin: string;
  readOnly: boolean;
}
