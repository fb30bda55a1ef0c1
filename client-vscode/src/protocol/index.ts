/**
 * The agent/* wire contract (PROTOCOL.md): one RequestType / NotificationType per method, typed with the
 * interfaces generated from the server's JSON Schemas. Imports only vscode-jsonrpc, so unit tests load it
 * without VS Code or a language client.
 */
import { NotificationType, RequestType } from 'vscode-jsonrpc';
import type { SessionParams } from './generated/agent-abort.params';
import type { AbortResult } from './generated/agent-abort.result';
import type { ChatParams } from './generated/agent-chat.params';
import type { ToolCall } from './generated/agent-update.params';
import type { ChatResult } from './generated/agent-chat.result';
import type { ConfirmToolParams } from './generated/agent-confirmTool.params';
import type { ConfirmToolResult } from './generated/agent-confirmTool.result';
import type { DeleteSessionResult } from './generated/agent-deleteSession.result';
import type { DiagnosticsParams } from './generated/agent-diagnostics.params';
import type { DiagnosticsResult } from './generated/agent-diagnostics.result';
import type { HistoryResult } from './generated/agent-history.result';
import type { LanguageFeatureParams } from './generated/agent-languageFeature.params';
import type { MemoryFileResult } from './generated/agent-memoryFile.result';
import type { NewSessionParams } from './generated/agent-newSession.params';
import type { NewSessionResult } from './generated/agent-newSession.result';
import type { SessionsParams } from './generated/agent-sessions.params';
import type { SessionsResult } from './generated/agent-sessions.result';
import type { UpdateParams } from './generated/agent-update.params';
import type { RevertParams } from './generated/agent-revert.params';
import type { RevertResult } from './generated/agent-revert.result';
import type { CommandsResult } from './generated/agent-commands.result';
import type { CompletionStatsResult } from './generated/agent-completionStats.result';
import type { SkillsResult } from './generated/agent-skills.result';

export type { ChatContext, ChatParams, Mention } from './generated/agent-chat.params';
export type { CommandInfo, CommandsResult } from './generated/agent-commands.result';
export type { SkillInfo, SkillsResult } from './generated/agent-skills.result';
export type { PlanEntry } from './generated/agent-update.params';
export type { RevertResult } from './generated/agent-revert.result';
export type { ChatResult } from './generated/agent-chat.result';
export type { CompletionStatsResult } from './generated/agent-completionStats.result';
export type { ConfirmToolParams } from './generated/agent-confirmTool.params';
export type { DiagnosticsParams } from './generated/agent-diagnostics.params';
export type { DiagnosticsResult, FileDiagnostics } from './generated/agent-diagnostics.result';
export type { HistoryMessage, HistoryResult, HistoryToolCall } from './generated/agent-history.result';
export type { LanguageFeatureParams } from './generated/agent-languageFeature.params';
export type { SessionInfo, SessionsResult } from './generated/agent-sessions.result';
export type { ClientAgentCapabilities } from './generated/initialize.experimental.agent.client';
export type {
  ConfirmationRequest, Notice, ToolCall, ToolCallUpdate, UpdateParams, Usage,
} from './generated/agent-update.params';

/** An image sent with a message (protocol 1.2, §9 "Images"): one of four types, at most 5 MiB decoded (the
 * schema says only `string` for its type). */
export interface ChatImage { mimeType: ImageType; data: string }
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type ImageType = typeof IMAGE_TYPES[number];
/** The most bytes one image may hold, decoded (§9). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** `fetch` is §9's (web_fetch). */
export type ToolKind = ToolCall['toolKind'];

/** One streamed update: the `update` field of agent/update. */
export type AgentUpdate = UpdateParams['update'];
export type PermissionMode = NonNullable<ChatParams['permissionMode']>;
export type Decision = ConfirmToolParams['decision'];

export const PERMISSION_MODES: readonly PermissionMode[] = ['default', 'acceptEdits', 'plan', 'bypassPermissions'];

// client → server
export const ChatRequest = new RequestType<ChatParams, ChatResult, void>('agent/chat');
export const AbortRequest = new RequestType<SessionParams, AbortResult, void>('agent/abort');
export const ConfirmToolRequest = new RequestType<ConfirmToolParams, ConfirmToolResult, void>('agent/confirmTool');
export const SessionsRequest = new RequestType<SessionsParams, SessionsResult, void>('agent/sessions');
export const HistoryRequest = new RequestType<SessionParams, HistoryResult, void>('agent/history');
export const DeleteSessionRequest = new RequestType<SessionParams, DeleteSessionResult, void>('agent/deleteSession');
export const ModelsRequest = new RequestType<Record<string, never>, ModelsResult, void>('agent/models');
export const NewSessionRequest = new RequestType<NewSessionParams, NewSessionResult, void>('agent/newSession');
/** agent/commands (§9; the server lists "commands" in `features`). */
export const CommandsRequest = new RequestType<Record<string, never>, CommandsResult, void>('agent/commands');
/** agent/skills (§10; the server lists "skills" in `features`). */
export const SkillsRequest = new RequestType<Record<string, never>, SkillsResult, void>('agent/skills');
/** agent/revert (§8; the server lists "revert" in `features`). */
export const RevertRequest = new RequestType<RevertParams, RevertResult, void>('agent/revert');
/** agent/completionStats (protocol 1.3, §10; the server lists "inlineCompletion" in `features`). */
export const MemoryFileRequest = new RequestType<Record<string, never>, MemoryFileResult, void>('agent/memoryFile');
export const CompletionStatsRequest = new RequestType<Record<string, never>, CompletionStatsResult, void>('agent/completionStats');
// server → client
export const UpdateNotification = new NotificationType<UpdateParams>('agent/update');
export const DiagnosticsRequest = new RequestType<DiagnosticsParams, DiagnosticsResult, void>('agent/diagnostics');
/** agent/languageFeature (protocol 1.2, §9): a standard LSP request for the editor's other language servers;
 * the result is that request's result shape, or null. */
export const LanguageFeatureRequest = new RequestType<LanguageFeatureParams, unknown, void>('agent/languageFeature');

/** agent/models (protocol 1.1, §8; the server lists "models" in `features`). */
export interface ModelsResult {
  models: { id: string; displayName?: string; provider?: string; contextWindow?: number }[];
  default: string;
  /** Why the list is only the configured model (the provider's list could not be read). */
  error?: string;
}

/** JSON-RPC error codes the client reacts to. */
export const MethodNotFound = -32601;
export const InvalidParams = -32602;
