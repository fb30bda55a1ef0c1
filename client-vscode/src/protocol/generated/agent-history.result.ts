/* Generated from schemas/agent-history.result.json by scripts/gen-types.mjs — do not edit. */

export interface HistoryResult {
  messages: HistoryMessage[];
  plan: PlanEntry[];
}
export interface HistoryMessage {
  content: string;
  durationMs?: number | null;
  images?: ChatImage[] | null;
  role: 'user' | 'assistant';
  stopReason?:
    ('end_turn' | 'max_turns' | 'max_tokens' | 'refusal' | 'aborted' | 'disabled' | 'error') | null;
  toolCalls?: HistoryToolCall[] | null;
  usage?: ChatUsage | null;
}
/**
 * An image sent with the message (PROTOCOL §9 "Images"): checked by the server (type, base64, 5 MiB).
 */
export interface ChatImage {
  data: string;
  mimeType: string;
}
/**
 * A tool call of a transcript, with how it went: also the wire shape of agent/history's tool calls.
 */
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
  toolKind: 'read' | 'search' | 'edit' | 'execute' | 'fetch' | 'other';
}
export interface ChatUsage {
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
  inputTokens: number;
  outputTokens: number;
}
/**
 * One step of the agent's plan.
 */
export interface PlanEntry {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
}
