/**
 * The chat panel's logic, between the webview and the server: it sends agent/chat, forwards the current
 * session's agent/update stream to the view, answers confirmations, stops, switches modes and sessions.
 * It depends only on the small AgentConnection and ChatHost interfaces — no VS Code, no language client — so
 * unit tests drive it with plain fakes.
 */
import {
  type FromWebview, MAX_MESSAGE_CHARS, type MentionChoice, type PanelCommand, type ServerState, type SlashChoice,
  type ToWebview, tooLong,
} from './messages';
import {
  AbortRequest, type ChatContext, type ChatImage, ChatRequest, CommandsRequest, ConfirmToolRequest, type Decision, DeleteSessionRequest,
  HistoryRequest, InvalidParams, type Mention, MethodNotFound, type RevertResult, RevertRequest, ModelsRequest, NewSessionRequest, PERMISSION_MODES, type PermissionMode, SessionsRequest,
  SkillsRequest, UpdateNotification, type UpdateParams,
} from './protocol';
import type { NotificationType, RequestType } from 'vscode-jsonrpc';
import { type Attachment, decodedBytes, imageProblem } from './images';
import { indexFrom, type IndexStatus } from './statusItem';

export interface Disposable { dispose(): void }

/** What the controller needs from a language client (vscode-languageclient's LanguageClient provides it). */
export interface AgentConnection {
  sendRequest<P, R>(type: RequestType<P, R, void>, params: P): Promise<R>;
  onNotification<P>(type: NotificationType<P>, handler: (params: P) => void): Disposable;
}

/** What the controller needs from the editor. */
export interface ChatHost {
  /** Posts to the webview; dropped when no view is open. */
  post(message: ToWebview): void;
  /** Brings the chat view forward (a confirmation is waiting). */
  reveal(): void;
  /** The editor's context for a chat: the active document and selection. */
  context(): ChatContext | undefined;
  /** Runs one of the few editor commands the panel offers (set the key, open the settings, restart). */
  command(name: PanelCommand): void;
  /** This window's workspace folder URI (sessions are listed per folder), if any. */
  workspace(): string | undefined;
  /** The server's last stderr lines (shown when it dies during a chat). */
  stderr(): string;
  copy(text: string): void;
  insert(text: string): void;
  /** What the panel's `@` list offers now. */
  mentionChoices(): Promise<MentionChoice[]>;
  /** Reads image files (`uris`, else the ones the user picks): the images, and a sentence for each that cannot go. */
  pickImages(uris?: string[]): Promise<{ images: Attachment[]; problems: string[] }>;
  /** A language answer's `index:` line (any session's): how much the agent's language server knew. */
  index?(status: IndexStatus): void;
}


interface Running {
  abortWhenKnown: boolean;
  /** A chat the panel did not start (a code action's command): its request, shown once its session is known. */
  external?: { text: string; shown: boolean };
}

export class ChatController {
  private connection?: AgentConnection;
  private subscription?: Disposable;
  private server: ServerState = { state: 'starting' };
  private sessionId?: string;
  private running?: Running;
  /** False once the server answered MethodNotFound to agent/sessions: no list to show. */
  private sessionsSupported = true;
  /** The model picked in the panel; empty: the configured one. */
  private model = '';

  constructor(private readonly host: ChatHost, private mode: PermissionMode) {}

  /** Uses a (re)started server; `undefined` when it failed, with `server` saying why. */
  attach(connection: AgentConnection | undefined, server: ServerState): void {
    this.subscription?.dispose();
    this.connection = connection;
    this.subscription = connection?.onNotification(UpdateNotification, (p) => this.onUpdate(p));
    this.setServerState(server);
    if (connection) void this.refreshSessions().then(() => this.refreshModels());
  }

  /** Shows the connection's state; a server that died takes the running chat with it (shown as failed). */
  setServerState(server: ServerState): void {
    this.server = server;
    this.host.post({ type: 'server', server });
    if (server.state === 'crashed' && this.running) this.failRunning();
  }

  private failRunning(): void {
    this.running = undefined;
    const details = this.host.stderr();
    this.host.post({ type: 'chatFailed', message: 'The agent server stopped during this chat.', ...(details ? { details } : {}) });
    this.host.post({ type: 'busy', busy: false });
  }

  get currentSessionId(): string | undefined { return this.sessionId; }
  get isRunning(): boolean { return this.running !== undefined; }

  /** Every message the webview posts. */
  async handle(message: FromWebview): Promise<void> {
    switch (message.type) {
      case 'ready': return this.onReady(message.sessionId, message.mode);
      case 'send': return this.send(message.text, message.mentions, message.images);
      case 'listMentions': return this.listMentions();
      case 'listCommands': return this.listCommands();
      case 'pickImages': return this.pickImages(message.uris);
      case 'stop': return this.stop();
      case 'confirm': return this.confirm(message.toolCallId, message.decision);
      case 'setMode': return this.setMode(message.mode);
      case 'openSession': return this.openSession(message.sessionId);
      case 'deleteSession': return this.deleteSession(message.sessionId);
      case 'newSession': return this.newSession();
      case 'command': return this.host.command(message.command);
      case 'setModel': this.model = message.model; return;
      case 'copy': return this.host.copy(message.text);
      case 'insert': return this.host.insert(message.text);
      case 'revert': return this.revert(message.toChat);
    }
  }

  /** A (re)loaded webview: continue the session it shows unless this window already has one. */
  private async onReady(sessionId?: string, mode?: PermissionMode): Promise<void> {
    this.sessionId ??= sessionId;
    if (mode && PERMISSION_MODES.includes(mode)) this.mode = mode;
    this.host.post({
      type: 'init', mode: this.mode, sessionId: this.sessionId, server: this.server, busy: this.isRunning,
    });
    await this.refreshSessions();
    await this.refreshModels();
  }

  private async listMentions(): Promise<void> {
    let choices: MentionChoice[] = [];
    try {
      choices = await this.host.mentionChoices();
    } catch (e) {
      this.error(`The @ list could not be read: ${describe(e)}`);
    }
    this.host.post({ type: 'mentionChoices', choices });
  }

  /** Posts the `/` list's choices: agent/commands when the server lists "commands" in its features, then the
   * skills of agent/skills (when it lists "skills") that no command's name takes, else `null` (the panel offers no
   * list). Asked each time the list opens: the project's command files and skills change. */
  private async listCommands(): Promise<void> {
    const connection = this.connection;
    if (!connection || this.server.state !== 'ready' || !this.server.features.includes('commands')) {
      return this.host.post({ type: 'commands', commands: null });
    }
    try {
      const [{ commands }, skills] = await Promise.all([connection.sendRequest(CommandsRequest, {}),
        this.server.features.includes('skills') ? connection.sendRequest(SkillsRequest, {}) : { skills: [] }]);
      const taken = new Set(commands.map((c) => c.name));
      const choices: SlashChoice[] = [...commands,
        ...skills.skills.filter((s) => !taken.has(s.name)).map((s) => ({ ...s, skill: true }))];
      this.host.post({ type: 'commands', commands: choices });
    } catch (e) {
      this.error(`The slash commands could not be listed: ${describe(e)}`);
      this.host.post({ type: 'commands', commands: null });
    }
  }

  /** Agent: Attach Image… and the panel's attach button: the picked images go to the message being written;
   * each file that cannot be sent is a message naming why. */
  async pickImages(uris?: string[]): Promise<void> {
    let picked: { images: Attachment[]; problems: string[] };
    try {
      picked = await this.host.pickImages(uris?.length ? uris : undefined);
    } catch (e) {
      return this.error(`The image could not be read: ${describe(e)}`);
    }
    this.attachImages(picked);
  }

  /** Images read by the extension (checked), for the message being written; a message for each refused. */
  attachImages(picked: { images: Attachment[]; problems: string[] }): void {
    for (const problem of picked.problems) this.error(problem);
    if (picked.images.length) this.host.post({ type: 'attach', images: picked.images });
  }

  async send(text: string, chips: MentionChoice[] = [], images: ChatImage[] = []): Promise<void> {
    const message = text.trim();
    if (!message && !images.length) return;  // images alone are a message (a pasted screenshot)
    if (this.running) return this.refuse('A chat is already running: stop it first.');
    if (message.length > MAX_MESSAGE_CHARS) return this.refuse(tooLong(message.length));
    // The webview checked them; checked again here, as nothing the server would refuse is sent.
    const problem = images.map((im, i) => imageProblem(`Image ${i + 1}`, im.mimeType, decodedBytes(im.data))).find(Boolean);
    if (problem) return this.refuse(problem);
    const connection = this.connection;
    if (!connection) return this.refuse(this.unavailable());
    const running: Running = { abortWhenKnown: false };
    this.running = running;
    this.host.post({ type: 'busy', busy: true });
    const editor = this.host.context();
    const mentions = toMentions(chips);
    const context = mentions.length ? { ...editor, mentions } : editor;
    try {
      // With agent/newSession (protocol 1.1) a new chat's session is known before its first update, so Stop
      // and the session list work from the start.
      if (!this.sessionId && this.server.state === 'ready' && this.server.features.includes('newSession')) {
        this.adopt((await connection.sendRequest(NewSessionRequest, {})).sessionId);
      }
      const result = await connection.sendRequest(ChatRequest, {
        ...(this.sessionId ? { sessionId: this.sessionId } : {}),
        message,
        ...(context ? { context } : {}),
        ...(images.length ? { images: images.map((im) => ({ mimeType: im.mimeType, data: im.data })) } : {}),
        permissionMode: this.mode,
        ...(this.model ? { model: this.model } : {}),
      });
      this.adopt(result.sessionId);
      this.host.post({ type: 'done', result });
    } catch (e) {
      if (this.running !== running) return;  // already shown as failed (the server died)
      if (isConnectionLost(e)) return this.failRunning();
      this.error(describe(e));
    } finally {
      if (this.running === running) this.running = undefined;
      this.host.post({ type: 'busy', busy: false });
    }
    await this.refreshSessions();
  }

  /** agent/revert of the current session back to before its chat `toChat` (else its last chat); the answer
   * goes to the panel. */
  async revert(toChat?: number): Promise<void> {
    const connection = this.connection;
    if (!connection || !this.sessionId) return this.error(this.unavailable());
    if (this.running) return this.error('Stop the running chat before reverting.');
    try {
      const result = await connection.sendRequest(RevertRequest, { sessionId: this.sessionId, ...(toChat === undefined ? {} : { toChat }) });
      this.host.post({ type: 'notice', level: result.refused.length ? 'warning' : 'info', message: describeRevert(result) });
    } catch (e) {
      // "Nothing to revert" and the like: a plain message, not an error.
      if (errorCode(e) === InvalidParams) this.host.post({ type: 'notice', level: 'info', message: describe(e) });
      else this.error(describe(e));
    }
  }

  /**
   * Runs a chat the panel did not start — a code action's `agent.*` command going through the language
   * client — and shows it: its request as a user message, its updates (in whichever session the server ran
   * it; the panel switches to it) and its result. `run` sends the command and answers the chat's result.
   */
  async external(text: string, run: () => Promise<unknown>): Promise<unknown> {
    if (this.running) return run();  // the server refuses or runs it elsewhere; the panel keeps its chat
    const running: Running = { abortWhenKnown: false, external: { text, shown: false } };
    this.running = running;
    this.host.post({ type: 'busy', busy: true });
    this.host.reveal();
    try {
      const result = await run();
      if (this.running !== running) return result;
      if (isChatResult(result)) {
        this.showExternal(result.sessionId);
        this.adopt(result.sessionId);
        this.host.post({ type: 'done', result });
      }
      return result;
    } catch (e) {
      if (this.running === running && !isConnectionLost(e)) {
        this.showExternal(undefined);
        this.error(describe(e));
      }
      throw e;
    } finally {
      if (this.running === running) this.running = undefined;
      this.host.post({ type: 'busy', busy: false });
      void this.refreshSessions();
    }
  }

  /** Shows the external chat's request once, in its session (switching the panel to it if needed). */
  private showExternal(sessionId: string | undefined): void {
    const ext = this.running?.external;
    if (!ext || ext.shown) return;
    ext.shown = true;
    if (sessionId && sessionId !== this.sessionId) {
      this.host.post({ type: 'reset' });
      this.sessionId = sessionId;
      this.host.post({ type: 'session', sessionId });
    }
    this.host.post({ type: 'external', text: ext.text });
  }

  /** Stops the running chat with agent/abort; a chat whose session is not known yet (its first update has
   * not arrived) is aborted as soon as it is. */
  async stop(): Promise<void> {
    if (!this.running || !this.connection) return;
    if (!this.sessionId) {
      this.running.abortWhenKnown = true;
      return;
    }
    try {
      await this.connection.sendRequest(AbortRequest, { sessionId: this.sessionId });
    } catch (e) {
      this.error(describe(e));
    }
  }

  async confirm(toolCallId: string, decision: Decision): Promise<void> {
    if (!this.connection || !this.sessionId) return;
    try {
      await this.connection.sendRequest(ConfirmToolRequest, { sessionId: this.sessionId, toolCallId, decision });
    } catch (e) {
      this.error(describe(e));
    }
  }

  setMode(mode: PermissionMode): void {
    if (PERMISSION_MODES.includes(mode)) this.mode = mode;
  }

  newSession(): void {
    if (this.running) return this.error('Stop the running chat before starting a new session.');
    this.sessionId = undefined;
    this.host.post({ type: 'reset' });
  }

  async openSession(sessionId: string): Promise<void> {
    if (!this.connection) return this.error(this.unavailable());
    if (this.running) return this.error('Stop the running chat before opening another session.');
    try {
      const { messages, plan } = await this.connection.sendRequest(HistoryRequest, { sessionId });
      this.sessionId = sessionId;
      this.host.post({ type: 'history', sessionId, messages, ...(plan?.length ? { plan } : {}) });
    } catch (e) {
      this.error(describe(e));
    }
  }

  async deleteSession(sessionId: string): Promise<void> {
    if (!this.connection) return;
    if (this.running && sessionId === this.sessionId) return this.error('Stop the running chat first.');
    try {
      await this.connection.sendRequest(DeleteSessionRequest, { sessionId });
      if (sessionId === this.sessionId) this.newSession();
    } catch (e) {
      this.error(describe(e));
    }
    await this.refreshSessions();
  }

  /** Posts the session list, or `null` (hide the picker) when the server has no agent/sessions. */
  async refreshSessions(): Promise<void> {
    if (!this.connection) return;
    if (!this.sessionsSupported) return this.host.post({ type: 'sessions', sessions: null });
    try {
      const workspace = this.host.workspace();
      const { sessions } = await this.connection.sendRequest(SessionsRequest, workspace ? { workspace } : {});
      this.host.post({ type: 'sessions', sessions });
    } catch (e) {
      if (errorCode(e) === MethodNotFound) {
        this.sessionsSupported = false;
        this.host.post({ type: 'sessions', sessions: null });
      }
    }
  }

  /** Posts the model picker's choices when the server lists "models" in its features; else hides it. */
  async refreshModels(): Promise<void> {
    if (!this.connection) return;
    if (this.server.state !== 'ready' || !this.server.features.includes('models')) {
      return this.host.post({ type: 'models', models: null, selected: this.model });
    }
    try {
      const result = await this.connection.sendRequest(ModelsRequest, {});
      this.host.post({
        type: 'models', selected: this.model || result.default, ...(result.error ? { note: result.error } : {}),
        models: result.models.map((m) => ({ id: m.id, ...(m.displayName ? { displayName: m.displayName } : {}) })),
      });
    } catch {
      this.host.post({ type: 'models', models: null, selected: this.model });
    }
  }

  private onUpdate({ sessionId, update }: UpdateParams): void {
    const index = indexFrom(update);
    if (index) this.host.index?.(index);
    if (this.running?.external) this.showExternal(sessionId);
    if (this.running && !this.sessionId) this.adopt(sessionId);  // the first update of a new session names it
    if (sessionId !== this.sessionId) return;
    this.host.post({ type: 'update', update });
    if (update.kind === 'confirmation_request') this.host.reveal();
  }

  private adopt(sessionId: string): void {
    if (this.sessionId === sessionId) return;
    this.sessionId = sessionId;
    this.host.post({ type: 'session', sessionId });
    if (this.running?.abortWhenKnown) void this.stop();
  }

  /** A message that was not sent: say why, and leave the panel ready (never "Working…" without a chat). */
  private refuse(message: string): void {
    this.error(message);
    if (!this.running) this.host.post({ type: 'busy', busy: false });
  }

  private error(message: string): void {
    this.host.post({ type: 'error', message });
  }

  private unavailable(): string {
    const s = this.server;
    return 'message' in s ? s.message : 'The agent server is still starting.';
  }
}

/** The panel's chips as `context.mentions` entries: what the server needs of each kind, without the label. */
export function toMentions(chips: readonly MentionChoice[]): Mention[] {
  return chips.map((c): Mention => (c.kind === 'selection' ? { kind: c.kind, uri: c.uri, range: c.range } : { kind: c.kind, uri: c.uri }));
}

function errorCode(e: unknown): number | undefined {
  return typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'number'
    ? (e as { code: number }).code : undefined;
}

/** The connection closed under a pending request (vscode-jsonrpc's PendingResponseRejected / ConnectionInactive). */
function isConnectionLost(e: unknown): boolean {
  const code = errorCode(e);
  return code === -32097 || code === -32096;
}

function isChatResult(r: unknown): r is import('./protocol').ChatResult {
  return typeof r === 'object' && r !== null && typeof (r as { sessionId?: unknown }).sessionId === 'string'
    && typeof (r as { stopReason?: unknown }).stopReason === 'string';
}

/** What a revert did, in one message: the files restored, and those left with the reason. */
export function describeRevert(r: RevertResult): string {
  const name = (uri: string) => decodeURIComponent(uri.replace(/^.*\//, ''));
  const parts: string[] = [];
  if (r.reverted.length) parts.push(`Reverted ${r.reverted.map(name).join(', ')}.`);
  for (const f of r.refused) parts.push(`Not reverted: ${name(f.uri)} (${f.reason})`);
  return parts.length ? parts.join('\n') : 'Nothing was reverted.';
}

/** A JSON-RPC error's message, as the server wrote it (it names the bad field). */
function describe(e: unknown): string {
  if (e instanceof Error || (typeof e === 'object' && e !== null && 'message' in e)) {
    return String((e as { message: unknown }).message);
  }
  return String(e);
}
