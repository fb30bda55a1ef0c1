/* Generated from schemas/agent-history.result.json by scripts/gen-types.mjs — do not edit. */

export interface HistoryResult {
  messages: HistoryMessage[];
}
export interface HistoryMessage {
  content: string;
  role: 'user' | 'assistant';
  toolCalls?: HistoryToolCall[] | null;
}
export interface HistoryToolCall {
  diff?: string | null;
  error?: string | null;
  input: {
    [k: string]: unknown;
  };
  name: string;
  output?: string | null;
  status: 'awaiting_confirmation' | 'running' | 'completed' | 'failed' | 'rejected' | 'cancelled';
  title: string;
  toolCallId: string;
  toolKind: 'read' | 'search' | 'edit' | 'execute' | 'other';
}
