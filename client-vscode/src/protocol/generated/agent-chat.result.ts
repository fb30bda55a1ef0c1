/* Generated from schemas/agent-chat.result.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/chat result: how the loop ended, always with metadata.
 */
export interface ChatResult {
  error?: ChatError | null;
  finalMessage: string;
  metadata: ChatMetadata;
  sessionId: string;
  stopReason: 'end_turn' | 'max_turns' | 'max_tokens' | 'refusal' | 'aborted' | 'disabled' | 'error';
  structuredOutput?: unknown;
}
export interface ChatError {
  message: string;
  type: 'llm_error' | 'tool_error' | 'initialization_failed' | 'context_overflow';
}
export interface ChatMetadata {
  deniedToolCalls: number;
  durationMs: number;
  toolCallsCount: number;
  turnsCount: number;
  usage: ChatUsage;
}
export interface ChatUsage {
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
  inputTokens: number;
  outputTokens: number;
}
