/**
 * Messages between the extension and the chat webview (postMessage both ways). Shared by both sides so the
 * webview bundle and the controller agree at compile time; the webview never talks to the server itself.
 */
import type {
  AgentUpdate, ChatResult, Decision, HistoryMessage, PermissionMode, SessionInfo,
} from './protocol';

/** Whether the server runs; `failed` carries what the user should do (install it, fix the setting). */
export type ServerState =
  | { state: 'starting' }
  | { state: 'ready' }
  | { state: 'failed'; message: string };

/** Extension → webview. */
export type ToWebview =
  | { type: 'init'; mode: PermissionMode; sessionId?: string; server: ServerState; busy: boolean }
  | { type: 'server'; server: ServerState }
  | { type: 'busy'; busy: boolean }
  | { type: 'session'; sessionId: string }
  | { type: 'update'; update: AgentUpdate }
  | { type: 'done'; result: ChatResult }
  | { type: 'error'; message: string }
  /** `null`: the server has no session list (agent/sessions is MethodNotFound), so the picker hides. */
  | { type: 'sessions'; sessions: SessionInfo[] | null }
  | { type: 'history'; sessionId: string; messages: HistoryMessage[] }
  | { type: 'reset' };

/** Webview → extension. `ready` carries what the webview restored from its saved state. */
export type FromWebview =
  | { type: 'ready'; sessionId?: string; mode?: PermissionMode }
  | { type: 'send'; text: string }
  | { type: 'stop' }
  | { type: 'confirm'; toolCallId: string; decision: Decision }
  | { type: 'setMode'; mode: PermissionMode }
  | { type: 'openSession'; sessionId: string }
  | { type: 'deleteSession'; sessionId: string }
  | { type: 'newSession' }
  | { type: 'command'; command: 'setApiKey' | 'openSettings' };
