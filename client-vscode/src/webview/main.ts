/**
 * The chat webview's script: keeps the transcript (saved with setState so a reloaded view redraws it), draws
 * it, and turns clicks and keys into messages for the extension. It never talks to the server itself.
 */
import type { FromWebview, ServerState, ToWebview } from '../messages';
import type { AgentUpdate, ChatResult, PermissionMode, SessionInfo } from '../protocol';
import { type Actions, el, renderItem } from './render';
import { type Item, Transcript } from './transcript';

interface SavedState { sessionId?: string; mode: PermissionMode; items: Item[]; draft: string }

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
};

let transcript = new Transcript(saved?.items ?? []);
let sessionId = saved?.sessionId;
let busy = false;
let sessions: SessionInfo[] | null = [];
/** The DOM node of each transcript item, by index. */
let nodes: HTMLElement[] = [];

const post = (message: FromWebview) => vscode.postMessage(message);
const actions: Actions = {
  confirm(toolCallId, decision) {
    draw(transcript.answer(toolCallId, decision));
    post({ type: 'confirm', toolCallId, decision });
  },
  command: (command) => post({ type: 'command', command }),
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
  save();
  scrollToEnd();
}

function redrawAll(): void {
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
  const t = ui.transcript;
  if (t.scrollHeight - t.scrollTop - t.clientHeight < 120) t.scrollTop = t.scrollHeight;
}

function save(): void {
  vscode.setState({ sessionId, mode: ui.mode.value as PermissionMode, items: transcript.items, draft: ui.prompt.value });
}

function setBusy(value: boolean): void {
  busy = value;
  ui.send.disabled = value;
  ui.stop.hidden = !value;
  ui.sessions.disabled = value;
  ui.newSession.disabled = value;
  ui.deleteSession.disabled = value;
  if (value) ui.status.textContent = 'Working…';
}

function showServer(server: ServerState): void {
  ui.banner.replaceChildren();
  ui.banner.hidden = server.state !== 'failed';
  if (server.state === 'failed') {
    const button = el('button', 'secondary', 'Open Settings');
    button.addEventListener('click', () => post({ type: 'command', command: 'openSettings' }));
    ui.banner.append(el('p', '', server.message), button);
  }
  if (!busy) ui.status.textContent = server.state === 'starting' ? 'Starting the agent server…' : '';
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
}

function onDone(result: ChatResult): void {
  draw(transcript.finish(result));
  ui.status.textContent = '';
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
    case 'session': sessionId = m.sessionId; save(); return showSessions();
    case 'update': return onUpdate(m.update);
    case 'done': return onDone(m.result);
    case 'error': return draw(transcript.error(m.message));
    case 'sessions': sessions = m.sessions; return showSessions();
    case 'history':
      sessionId = m.sessionId;
      transcript = Transcript.fromHistory(m.messages);
      redrawAll();
      return showSessions();
    case 'reset':
      sessionId = undefined;
      transcript = new Transcript();
      redrawAll();
      return showSessions();
  }
});

function send(): void {
  const text = ui.prompt.value.trim();
  if (!text || busy) return;
  draw(transcript.user(text));
  ui.prompt.value = '';
  setBusy(true);
  post({ type: 'send', text });
}

ui.prompt.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
});
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && busy) { e.preventDefault(); post({ type: 'stop' }); }
});
ui.prompt.addEventListener('input', save);
ui.send.addEventListener('click', send);
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
