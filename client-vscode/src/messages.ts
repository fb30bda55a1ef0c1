/**
 * Messages between the extension and the chat webview (postMessage both ways). Shared by both sides so the
 * webview bundle and the controller agree at compile time; the webview never talks to the server itself.
 */
import type { Attachment } from './images';
import type {
  AgentUpdate, ChatImage, ChatResult, CommandInfo, Decision, HistoryMessage, Mention, PermissionMode, PlanEntry, SessionInfo,
} from './protocol';

/**
 * The connection to the server, as the panel shows it, with the action that fixes each bad state:
 * `missing` (Open Setting), `failed` — not executable, not agent-lsp, broke on start — (Open Setting, Retry),
 * `crashed` (Restart; `details` are the server's last stderr lines).
 */
export type ServerState =
  | { state: 'starting' }
  | { state: 'restarting' }
  | { state: 'ready'; features: string[] }
  | { state: 'missing'; message: string }
  | { state: 'failed'; message: string; details?: string }
  | { state: 'crashed'; message: string; details?: string };

/** The largest message the panel sends; a larger one is refused naming the size (never a frozen panel). */
export const MAX_MESSAGE_CHARS = 1_000_000;

export function tooLong(chars: number): string {
  return `The message is ${chars.toLocaleString('en')} characters; the panel sends at most `
    + `${MAX_MESSAGE_CHARS.toLocaleString('en')}. Save the text to a file and ask the agent to read it.`;
}

/** A choice of the `/` list: a slash command, or a skill (`skill`: `/name` runs it when no command has that name). */
export type SlashChoice = CommandInfo & { skill?: boolean };

/** A model the picker offers (agent/models). */
export interface ModelChoice { id: string; displayName?: string }

/**
 * What the panel's `@` list offers and a chip holds: a mention (`file`, `selection`, `diagnostics`) of one
 * document, with the label it shows: the workspace-relative name (`app.py:3-7` for a selection).
 */
export interface MentionChoice {
  kind: Exclude<Mention['kind'], 'symbol'>;
  uri: string;
  range?: NonNullable<Mention['range']>;
  label: string;
}

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
  | { type: 'history'; sessionId: string; messages: HistoryMessage[]; plan?: PlanEntry[] }
  | { type: 'reset' }
  /** The running chat ended without an answer: the server died. */
  | { type: 'chatFailed'; message: string; details?: string }
  /** The model picker's choices; `null` hides it (the server has no agent/models). */
  | { type: 'models'; models: ModelChoice[] | null; selected: string; note?: string }
  /** A line of information in the transcript (e.g. what a revert did). */
  | { type: 'notice'; level: 'info' | 'warning'; message: string }
  /** A chat the panel did not start (a code action's agent.* command) begins: its request, as a user message. */
  | { type: 'external'; text: string }
  /** The `@` list's choices: the active editor's selection and diagnostics, then open editors, then files. */
  | { type: 'mentionChoices'; choices: MentionChoice[] }
  /** The `/` list's choices (agent/commands, then the skills of agent/skills no command's name takes); `null`: the
   * server has no slash commands. */
  | { type: 'commands'; commands: SlashChoice[] | null }
  /** Images the attach command read (already checked), for the message being written. */
  | { type: 'attach'; images: Attachment[] };

/** Webview → extension. `ready` carries what the webview restored from its saved state. */
export type FromWebview =
  | { type: 'ready'; sessionId?: string; mode?: PermissionMode }
  /** A message, with the chips picked from the `@` list (they become `context.mentions`). */
  | { type: 'send'; text: string; mentions?: MentionChoice[]; images?: ChatImage[] }
  /** The user typed `/` at the start of the input: the extension answers with `commands`. */
  | { type: 'listCommands' }
  /** The attach button (no `uris`: the extension asks for image files), or files dragged from VS Code's explorer
   * (their URIs): the extension reads them and answers with `attach`. */
  | { type: 'pickImages'; uris?: string[] }
  /** The user typed `@`: the extension answers with `mentionChoices`. */
  | { type: 'listMentions' }
  | { type: 'stop' }
  | { type: 'confirm'; toolCallId: string; decision: Decision }
  | { type: 'setMode'; mode: PermissionMode }
  | { type: 'openSession'; sessionId: string }
  | { type: 'deleteSession'; sessionId: string }
  | { type: 'newSession' }
  | { type: 'command'; command: PanelCommand }
  | { type: 'setModel'; model: string }
  | { type: 'copy'; text: string }
  | { type: 'insert'; text: string }
  /** agent/revert of the shown session back to before its chat `toChat` (0-based); without it, its last chat. */
  | { type: 'revert'; toChat?: number };

/** Editor commands the panel offers. */
export type PanelCommand = 'setApiKey' | 'openSettings' | 'openServerSetting' | 'restart';
