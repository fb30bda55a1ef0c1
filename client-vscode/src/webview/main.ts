/**
 * The chat webview's script: keeps the transcript (saved with setState so a reloaded view redraws it), draws
 * it, and turns clicks and keys into messages for the extension. It never talks to the server itself.
 */
import {
  type FromWebview, MAX_MESSAGE_CHARS, type MentionChoice, type ModelChoice, type ServerState, type ToWebview, tooLong,
} from '../messages';
import type { Attachment } from '../images';
import type { AgentUpdate, ChatResult, PermissionMode, PlanEntry, SessionInfo } from '../protocol';
import { type Actions, el, planList, renderItem } from './render';
import { CommandInput } from './commands';
import { ImageInput } from './images';
import { chipText, MentionInput } from './mentions';
import { type Item, Transcript } from './transcript';

interface SavedState {
  sessionId?: string; mode: PermissionMode; items: Item[]; draft: string; mentions?: MentionChoice[];
  plan?: PlanEntry[]; images?: Attachment[];
}

declare function acquireVsCodeApi(): {
  postMessage(message: FromWebview): void;
  getState(): SavedState | undefined;
  setState(state: SavedState): void;
};

const vscode = acquireVsCodeApi();
const saved = vscode.getState();
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const ui = {
  transcript: $<HTMLElement>('transcript'), prompt: $<HTMLTextAreaElement>('prompt'),
  send: $<HTMLButtonElement>('send'), stop: $<HTMLButtonElement>('stop'), mode: $<HTMLSelectElement>('mode'),
  status: $<HTMLElement>('status'), banner: $<HTMLElement>('banner'), sessions: $<HTMLSelectElement>('sessions'),
  newSession: $<HTMLButtonElement>('new-session'), deleteSession: $<HTMLButtonElement>('delete-session'),
  queued: $<HTMLElement>('queued'), model: $<HTMLSelectElement>('model'),
  chips: $<HTMLElement>('mentions'), mentionList: $<HTMLUListElement>('mention-list'),
  plan: $<HTMLDetailsElement>('plan'), attachments: $<HTMLElement>('attachments'), attach: $<HTMLButtonElement>('attach'),
  commandList: $<HTMLUListElement>('command-list'), composer: $<HTMLElement>('composer'),
};

let transcript = new Transcript(saved?.items ?? [], saved?.plan ?? []);
let sessionId = saved?.sessionId;
let busy = false;
let sessions: SessionInfo[] | null = [];
let server: ServerState = { state: 'starting' };
/** A message typed while a chat runs: sent when that chat ends, unless cancelled. */
let queued: string | undefined;
/** The chips and images of the queued message. */
let queuedMentions: MentionChoice[] = [];
let queuedImages: Attachment[] = [];
/** Whether new output scrolls the transcript: true unless the user scrolled up. */
let follow = true;
/** The DOM node of each transcript item, by index. */
let nodes: HTMLElement[] = [];

const post = (message: FromWebview) => vscode.postMessage(message);
const mentions = new MentionInput(ui.prompt, ui.chips, ui.mentionList, post, save, saved?.mentions);
const commands = new CommandInput(ui.prompt, ui.commandList, post);
const images = new ImageInput(ui.attachments, (message) => draw(transcript.error(message)), save, () => (takesImages() ? undefined
  : 'The agent server does not take images (they came with protocol 1.2): update agent-lsp to send them.'), saved?.images);
images.listen(ui.prompt, ui.composer, (uris) => post({ type: 'pickImages', uris }));
const actions: Actions = {
  confirm(toolCallId, decision) {
    draw(transcript.answer(toolCallId, decision));
    post({ type: 'confirm', toolCallId, decision });
  },
  command: (command) => post({ type: 'command', command }),
  copy: (text) => post({ type: 'copy', text }),
  insert: (text) => post({ type: 'insert', text }),
};

/** Redraws item `i` (or appends it), keeping which <details> the user opened; -1 does nothing. */
function draw(i: number): void {
  if (i < 0) return;
  const node = renderItem(transcript.items[i], actions);
  const old = nodes[i];
  if (old) {
    const open = [...old.querySelectorAll('details')].map((d) => d.open);
    node.querySelectorAll('details').forEach((d, k) => { if (open[k]) d.open = true; });
    old.replaceWith(node);
  } else {
    ui.transcript.querySelector('.welcome')?.remove();
    ui.transcript.append(node);
  }
  nodes[i] = node;
  if (transcript.items[i].kind === 'result') addRevert(i, node);
  save();
  const ask = node.querySelector<HTMLButtonElement>('.confirm button');
  if (ask) {  // the agent waits for the user: always bring the question into view, ready for the keyboard
    ask.scrollIntoView({ block: 'nearest' });
    ask.focus();
  } else {
    scrollToEnd();
  }
}

/** "Revert this turn" on a finished chat (when the server has agent/revert): undoes it and every later one. */
function addRevert(i: number, node: HTMLElement): void {
  if (!canRevert() || !sessionId) return;
  const { chat, last } = transcript.chatOf(i);
  if (chat < 0) return;
  const button = el('button', 'secondary revert', last ? 'Revert this turn' : 'Revert to before this turn');
  button.title = last ? 'Undo the edits this chat made' : 'Undo the edits of this chat and of every later one';
  // The last chat goes without toChat (the server's own "last chat"), so it never depends on our count.
  button.addEventListener('click', () => { if (!busy) post({ type: 'revert', ...(last ? {} : { toChat: chat }) }); });
  node.append(button);
}

/** Whether the server takes images with a message (it lists "images" in its features). */
function takesImages(): boolean {
  return server.state === 'ready' && (server.features ?? []).includes('images');
}

function canRevert(): boolean {
  return server.state === 'ready' && (server.features ?? []).includes('revert');
}

/** Redraws the results (their revert labels depend on which chat is the last). */
function redrawResults(): void {
  transcript.items.forEach((it, i) => { if (it.kind === 'result' && nodes[i]) draw(i); });
}

/** The plan pinned above the chat (hidden while the session has none); keeps it open or closed as the user left it. */
function drawPlan(): void {
  const entries = transcript.plan;
  ui.plan.hidden = entries.length === 0;
  ui.plan.replaceChildren(...(entries.length ? planList(entries) : []));
}

function redrawAll(): void {
  drawPlan();
  ui.transcript.replaceChildren();
  nodes = [];
  if (transcript.items.length === 0) ui.transcript.append(welcome());
  transcript.items.forEach((_, i) => draw(i));
  save();
}

function welcome(): HTMLElement {
  const box = el('div', 'welcome');
  box.append(el('h2', '', 'Agent'), el('p', '',
    'Ask about your code or ask for a change. The agent reads your open buffers (unsaved text included) and '
    + 'your diagnostics, edits through the editor so Undo works, and asks before it edits or runs a command.'));
  return box;
}

function scrollToEnd(): void {
  if (follow) ui.transcript.scrollTop = ui.transcript.scrollHeight;
}

function save(): void {
  vscode.setState({ sessionId, mode: ui.mode.value as PermissionMode, items: savedItems(), draft: ui.prompt.value,
    mentions: mentions.chips, plan: transcript.plan, images: images.images });
}

/** The state is written on every update: sent images over 64 KiB stay out of it (a reloaded view shows their
 * message without them; the server has them), so a long chat does not copy megabytes each time. */
const SAVED_IMAGE_CHARS = 64 * 1024;
function savedItems(): Item[] {
  return transcript.items.map((it) => (it.kind === 'user' && it.images?.some((im) => im.data.length > SAVED_IMAGE_CHARS)
    ? { ...it, images: it.images.filter((im) => im.data.length <= SAVED_IMAGE_CHARS) } : it));
}

function setBusy(value: boolean): void {
  busy = value;
  ui.send.disabled = value;
  ui.stop.hidden = !value;
  ui.sessions.disabled = value;
  ui.newSession.disabled = value;
  ui.deleteSession.disabled = value;
  ui.status.textContent = value ? 'Working…' : SERVER_STATUS[server.state];
  if (!value && queued !== undefined && server.state === 'ready') {
    const [text, chips, pics] = [queued, queuedMentions, queuedImages];
    setQueued(undefined);
    submit(text, chips, pics);
  }
}

const SERVER_STATUS: Record<ServerState['state'], string> = {
  starting: 'Starting the agent server…', restarting: 'Restarting the agent server…', ready: '',
  missing: '', failed: '', crashed: '',
};

/** The connection's state; a bad one is a banner with what happened and the button that fixes it. */
function showServer(s: ServerState): void {
  const couldRevert = canRevert();
  server = s;
  if (couldRevert !== canRevert()) redrawResults();
  ui.banner.replaceChildren();
  ui.banner.hidden = !('message' in s);
  ui.banner.dataset.state = s.state;
  if ('message' in s) {
    ui.banner.append(el('p', '', s.message));
    if ('details' in s && s.details) ui.banner.append(el('pre', 'stderr', s.details));
    const buttons: [string, 'openServerSetting' | 'restart', string][] = s.state === 'crashed'
      ? [['Restart', 'restart', 'primary']]
      : s.state === 'missing' ? [['Open Setting', 'openServerSetting', 'primary'], ['Retry', 'restart', 'secondary']]
        : [['Open Setting', 'openServerSetting', 'primary'], ['Retry', 'restart', 'secondary']];
    for (const [label, command, cls] of buttons) {
      const button = el('button', cls, label);
      button.dataset.command = command;
      button.addEventListener('click', () => post({ type: 'command', command }));
      ui.banner.append(button, ' ');
    }
  }
  if (!busy) ui.status.textContent = SERVER_STATUS[s.state];
  ui.attach.hidden = !takesImages();
  if (s.state === 'ready' && !busy && queued !== undefined) {
    const [text, chips, pics] = [queued, queuedMentions, queuedImages];
    setQueued(undefined);
    submit(text, chips, pics);
  }
}

function setQueued(text: string | undefined, chipsOfQueued: MentionChoice[] = [], imagesOfQueued: Attachment[] = []): void {
  queued = text;
  queuedMentions = chipsOfQueued;
  queuedImages = imagesOfQueued;
  ui.queued.replaceChildren();
  ui.queued.hidden = text === undefined;
  if (text === undefined) return;
  const cancel = el('button', 'secondary', 'Cancel');
  cancel.title = 'Do not send this message';
  cancel.addEventListener('click', () => {
    if (!ui.prompt.value) {
      ui.prompt.value = text;
      mentions.setChips([...chipsOfQueued, ...mentions.chips]);
      images.set([...imagesOfQueued, ...images.images]);
    }
    setQueued(undefined);
  });
  ui.queued.append(el('span', 'queued-label', 'Queued'), el('span', 'queued-text', text), cancel);
}

function showModels(models: ModelChoice[] | null, selected: string): void {
  ui.model.hidden = models === null || models.length === 0;
  if (!models) return;
  const list = models.some((m) => m.id === selected) || !selected ? models : [{ id: selected }, ...models];
  ui.model.replaceChildren(...list.map((m) => option(m.id, m.displayName ?? m.id)));
  ui.model.value = selected;
}

function showSessions(): void {
  ui.sessions.hidden = sessions === null;
  ui.deleteSession.hidden = sessions === null || !sessionId;
  if (sessions === null) return;
  const options = sessions.map((s) => option(s.sessionId, `${s.title} — ${new Date(s.updatedAt).toLocaleString()}`));
  if (!sessionId || !sessions.some((s) => s.sessionId === sessionId)) {
    options.unshift(option(sessionId ?? '', sessionId ? 'This conversation' : 'New conversation'));
  }
  ui.sessions.replaceChildren(...options);
  ui.sessions.value = sessionId ?? '';
}

function option(value: string, label: string): HTMLOptionElement {
  const o = el('option', '', label.length > 80 ? label.slice(0, 79) + '…' : label);
  o.value = value;
  return o;
}

function onUpdate(update: AgentUpdate): void {
  if (update.kind === 'turn_start') ui.status.textContent = `Turn ${update.turn}…`;
  else if (update.kind === 'usage') ui.status.textContent = `${((update.inputTokens ?? 0) + (update.outputTokens ?? 0)).toLocaleString('en')} tokens`;
  draw(transcript.apply(update));
  if (update.kind === 'plan' && !update.parentToolCallId) { drawPlan(); save(); }
}

function onDone(result: ChatResult): void {
  const i = transcript.finish(result);
  transcript.settled.forEach(draw);
  draw(i);
  redrawResults();
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const m = event.data;
  switch (m.type) {
    case 'init':
      ui.mode.value = m.mode;
      if (m.sessionId !== sessionId) {  // this window already continues another session: show that one
        sessionId = m.sessionId;
        transcript = new Transcript();
        redrawAll();
        if (sessionId && !m.busy) post({ type: 'openSession', sessionId });
      }
      setBusy(m.busy);
      showServer(m.server);
      return;
    case 'server': return showServer(m.server);
    case 'busy': return setBusy(m.busy);
    case 'session': sessionId = m.sessionId; save(); redrawResults(); return showSessions();
    case 'update': return onUpdate(m.update);
    case 'done': return onDone(m.result);
    case 'error': return draw(transcript.error(m.message));
    case 'notice': return draw(transcript.notice(m.level, m.message));
    case 'external': follow = true; return draw(transcript.user(m.text));
    case 'mentionChoices': return mentions.setChoices(m.choices);
    case 'commands': return commands.setCommands(m.commands);
    case 'attach': return images.add(m.images);
    case 'chatFailed': transcript.fail(m.message, m.details).forEach(draw); return;
    case 'models':
      ui.model.title = m.note ? `The model of the next chat (${m.note})` : 'The model of the next chat';
      return showModels(m.models, m.selected);
    case 'sessions': sessions = m.sessions; return showSessions();
    case 'history':
      sessionId = m.sessionId;
      transcript = Transcript.fromHistory(m.messages, m.plan);
      redrawAll();
      return showSessions();
    case 'reset':
      sessionId = undefined;
      transcript = new Transcript();
      redrawAll();
      return showSessions();
  }
});

/** Enter: sends, or queues the message while a chat runs (one at a time); refuses what cannot be sent. */
function send(): void {
  const text = ui.prompt.value.trim();
  if (!text && !images.images.length) return;  // images alone are a message (a pasted screenshot)
  if (text.length > MAX_MESSAGE_CHARS) return void draw(transcript.error(tooLong(text.length)));
  // While a chat runs, or the server is still starting, the message waits for its turn.
  if (busy || server.state === 'starting' || server.state === 'restarting') {
    if (queued !== undefined) return;  // one queued message; cancel it to queue another
    setQueued(text, mentions.chips, images.images);
    ui.prompt.value = '';
    mentions.setChips([]);
    images.set([]);
    return;
  }
  if (server.state !== 'ready') return;  // the banner says what is wrong and how to fix it
  const [chips, pics] = [mentions.chips, images.images];
  ui.prompt.value = '';
  mentions.setChips([]);
  images.set([]);
  submit(text, chips, pics);
}

/** Sends a message with its chips (shown under it in the transcript) and images (thumbnails under it). */
function submit(text: string, chips: MentionChoice[] = [], pics: Attachment[] = []): void {
  follow = true;
  const sent = pics.map((p) => ({ mimeType: p.mimeType, data: p.data }));
  draw(transcript.user(chips.length ? `${text}\n\n${chips.map(chipText).join(' ')}` : text, sent));
  setBusy(true);
  post({ type: 'send', text, ...(chips.length ? { mentions: chips } : {}), ...(sent.length ? { images: sent } : {}) });
}

ui.prompt.addEventListener('keydown', (e) => {
  if (mentions.onKeydown(e) || commands.onKeydown(e)) return;
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); mentions.close(); commands.close(); send(); }
});
document.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape') return;
  // Escape answers a waiting question with Reject; otherwise it stops the running chat.
  const reject = ui.transcript.querySelector<HTMLButtonElement>('.confirm button[data-decision="reject_once"]');
  if (reject) { e.preventDefault(); reject.click(); return; }
  if (busy) { e.preventDefault(); post({ type: 'stop' }); }
});
ui.transcript.addEventListener('scroll', () => {
  const t = ui.transcript;
  follow = t.scrollHeight - t.scrollTop - t.clientHeight < 24;
});
ui.model.addEventListener('change', () => post({ type: 'setModel', model: ui.model.value }));
ui.prompt.addEventListener('input', save);
ui.send.addEventListener('click', send);
ui.attach.addEventListener('click', () => post({ type: 'pickImages' }));
ui.stop.addEventListener('click', () => post({ type: 'stop' }));
ui.mode.addEventListener('change', () => { save(); post({ type: 'setMode', mode: ui.mode.value as PermissionMode }); });
ui.newSession.addEventListener('click', () => post({ type: 'newSession' }));
ui.deleteSession.addEventListener('click', () => { if (sessionId) post({ type: 'deleteSession', sessionId }); });
ui.sessions.addEventListener('change', () => { if (ui.sessions.value) post({ type: 'openSession', sessionId: ui.sessions.value }); });

ui.mode.value = saved?.mode ?? 'default';
ui.prompt.value = saved?.draft ?? '';
redrawAll();
showSessions();
post({ type: 'ready', ...(sessionId ? { sessionId } : {}), ...(saved?.mode ? { mode: saved.mode } : {}) });
