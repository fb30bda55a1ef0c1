/* Generated from schemas/agent-confirmTool.params.json by scripts/gen-types.mjs — do not edit. */

export interface ConfirmToolParams {
  decision: 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always';
  message?: string | null;
  sessionId: string;
  toolCallId: string;
}
