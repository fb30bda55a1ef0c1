/* Generated from schemas/agent-sessions.result.json by scripts/gen-types.mjs — do not edit. */

export interface SessionsResult {
  sessions: SessionInfo[];
}
export interface SessionInfo {
  createdAt: string;
  sessionId: string;
  title: string;
  turnsCount: number;
  updatedAt: string;
  usage: ChatUsage;
  workspace?: string | null;
}
export interface ChatUsage {
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
  inputTokens: number;
  outputTokens: number;
}
