/* Generated from schemas/agent-update.params.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/update notification params.
 */
export interface UpdateParams {
  seq: number;
  sessionId: string;
  update:
    | TurnStart
    | TextDelta
    | ThinkingDelta
    | ToolCall
    | ToolCallUpdate
    | ConfirmationRequest
    | Usage
    | Notice
    | Plan;
}
/**
 * A model call of the loop begins.
 */
export interface TurnStart {
  kind: 'turn_start';
  maxTurns: number;
  parentToolCallId?: string | null;
  turn: number;
}
/**
 * Streamed assistant text.
 */
export interface TextDelta {
  kind: 'text_delta';
  parentToolCallId?: string | null;
  text: string;
}
/**
 * Streamed assistant thinking.
 */
export interface ThinkingDelta {
  kind: 'thinking_delta';
  parentToolCallId?: string | null;
  text: string;
}
/**
 * The model asked for a tool call.
 */
export interface ToolCall {
  input: {
    [k: string]: unknown;
  };
  kind: 'tool_call';
  locations?: Location[] | null;
  name: string;
  parentToolCallId?: string | null;
  title: string;
  toolCallId: string;
  toolKind: 'read' | 'search' | 'edit' | 'execute' | 'fetch' | 'other';
}
/**
 * A place a tool call touches.
 */
export interface Location {
  range?: Range | null;
  uri: string;
}
/**
 * An LSP range.
 */
export interface Range {
  end: Position;
  start: Position;
}
/**
 * Zero-based line and character, as LSP counts them.
 */
export interface Position {
  character: number;
  line: number;
}
/**
 * A tool call changed status, or streamed output.
 */
export interface ToolCallUpdate {
  diff?: string | null;
  error?: string | null;
  kind: 'tool_call_update';
  output?: string | null;
  parentToolCallId?: string | null;
  status: 'awaiting_confirmation' | 'running' | 'completed' | 'failed' | 'rejected' | 'cancelled';
  toolCallId: string;
}
/**
 * The loop waits for the user to allow or reject a tool call.
 */
export interface ConfirmationRequest {
  command?: string | null;
  diff?: string | null;
  input: {
    [k: string]: unknown;
  };
  kind: 'confirmation_request';
  name: string;
  options: ('allow_once' | 'allow_always' | 'reject_once' | 'reject_always')[];
  parentToolCallId?: string | null;
  title: string;
  toolCallId: string;
}
/**
 * Token usage, cumulative for the chat.
 */
export interface Usage {
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
  inputTokens: number;
  kind: 'usage';
  outputTokens: number;
  parentToolCallId?: string | null;
}
/**
 * Something the user should know: a retry, a compaction, a nudge.
 */
export interface Notice {
  kind: 'notice';
  level: 'info' | 'warning';
  message: string;
  parentToolCallId?: string | null;
}
/**
 * The agent's whole plan, each time it changes (`todo_write`).
 */
export interface Plan {
  entries: PlanEntry[];
  kind: 'plan';
  parentToolCallId?: string | null;
}
/**
 * One step of the agent's plan.
 */
export interface PlanEntry {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
}
