/**
 * Draws transcript items as DOM. Markdown goes through marked then DOMPurify (the model's text is untrusted);
 * everything else is built with textContent, never innerHTML.
 */
import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/common';
import { Marked } from 'marked';
import type { PanelCommand } from '../messages';
import type { ChatImage, ChatResult, Decision, PlanEntry } from '../protocol';
import type { Item, ToolItem } from './transcript';

/** What a rendered item can ask for: the user answered a confirmation, clicked a command, or a code block's
 * Copy / Insert at cursor. */
export interface Actions {
  confirm(toolCallId: string, decision: Decision): void;
  command(name: PanelCommand): void;
  copy(text: string): void;
  insert(text: string): void;
}

const DECISION_LABEL: Record<Decision, string> = {
  allow_once: 'Allow once', allow_always: 'Allow always', reject_once: 'Reject', reject_always: 'Reject always',
};
const ANSWERED_LABEL: Record<Decision, string> = {
  allow_once: 'Allowed once', allow_always: 'Allowed for this session', reject_once: 'Rejected',
  reject_always: 'Rejected for this session',
};
/** The panel offers the three everyday answers; reject_always stays available to other clients. */
const OFFERED: Decision[] = ['allow_once', 'allow_always', 'reject_once'];
const KIND_ICON: Record<ToolItem['toolKind'], string> = {
  read: '◉', search: '⌕', edit: '✎', execute: '›_', fetch: '⇣', other: '•',
};

export function renderItem(item: Item, actions: Actions): HTMLElement {
  switch (item.kind) {
    case 'user': return user(item.text, item.images);
    case 'assistant': return assistant(item.text, item.thinking, actions);
    case 'tool': return tool(item, actions);
    case 'notice': return el('div', `notice ${item.level}`, item.message);
    case 'result': return result(item.result, actions);
    case 'error': return failure(item, actions);
  }
}

function user(text: string, images: ChatImage[] = []): HTMLElement {
  const box = el('div', 'msg user', text);
  if (images.length) box.append(thumbnails(images));
  return box;
}

/** A row of image thumbnails (data: URLs, which the page's CSP allows for images only). */
export function thumbnails(images: (ChatImage & { name?: string })[], remove?: (i: number) => void): HTMLElement {
  const row = el('div', 'thumbnails');
  images.forEach((image, i) => {
    const figure = el('span', 'thumbnail');
    const img = el('img');
    img.src = `data:${image.mimeType};base64,${image.data}`;
    img.alt = image.name ?? `Image ${i + 1}`;
    img.title = img.alt;
    figure.append(img);
    if (remove) {
      const button = el('button', 'icon thumbnail-remove', '×');
      button.title = `Remove ${img.alt}`;
      button.setAttribute('aria-label', button.title);
      button.addEventListener('click', () => remove(i));
      figure.append(button);
    }
    row.append(figure);
  });
  return row;
}

const PLAN_MARK: Record<PlanEntry['status'], string> = { pending: '○', in_progress: '◐', completed: '✓' };
const PLAN_STATUS: Record<PlanEntry['status'], string> = { pending: 'to do', in_progress: 'in progress', completed: 'done' };

/** The agent's plan as a checklist: a summary with how many steps are done, and each step with its mark. */
export function planList(entries: PlanEntry[]): HTMLElement[] {
  const done = entries.filter((e) => e.status === 'completed').length;
  const summary = el('summary', 'plan-summary');
  summary.append(el('span', 'plan-title', 'Plan'), el('span', 'plan-count', `${done}/${entries.length} done`));
  const list = el('ol', 'plan-list');
  for (const e of entries) {
    const li = el('li', `plan-entry ${e.status}`);
    li.setAttribute('aria-label', `${e.content} (${PLAN_STATUS[e.status]})`);
    li.append(el('span', 'plan-mark', PLAN_MARK[e.status]), el('span', 'plan-text', e.content));
    list.append(li);
  }
  return [summary, list];
}

function failure(item: Extract<Item, { kind: 'error' }>, actions: Actions): HTMLElement {
  const box = el('div', 'notice error', item.message);
  if (item.details) box.append(el('pre', 'stderr', item.details));
  if (item.restart) {
    const button = el('button', 'primary', 'Restart');
    button.addEventListener('click', () => actions.command('restart'));
    box.append(el('br'), button);
  }
  return box;
}

/** Raw HTML in the model's text is shown as text, as a chat should (it is often an example, not markup).
 * DOMPurify stays as the second line of defence for anything markdown itself produces. */
const md = new Marked({ gfm: true, renderer: { html: ({ text }) => escapeHtml(text) } });

export function markdown(text: string): string {
  return DOMPurify.sanitize(md.parse(text, { async: false }));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Highlights each code block (highlight.js, coloured from the theme in chat.css) and gives it a bar with its
 * language, Copy and Insert at cursor. Runs on sanitized DOM; highlight.js escapes what it writes. */
function enhanceCode(body: HTMLElement, actions: Actions): void {
  for (const code of body.querySelectorAll<HTMLElement>('pre > code')) {
    const pre = code.parentElement!;
    const source = (code.textContent ?? '').replace(/\n$/, '');  // marked ends a block with a newline
    const lang = /language-([\w+#-]+)/.exec(code.className)?.[1];
    if (source.length <= 100_000) {  // a huge block is shown plain rather than freezing the panel
      const known = lang && hljs.getLanguage(lang);
      code.innerHTML = known ? hljs.highlight(source, { language: lang, ignoreIllegals: true }).value
        : hljs.highlightAuto(source).value;
      code.classList.add('hljs');
    }
    const bar = el('div', 'code-bar');
    const copy = el('button', 'code-action copy', 'Copy');
    copy.title = 'Copy to the clipboard';
    copy.addEventListener('click', () => { actions.copy(source); copy.textContent = 'Copied'; });
    const insert = el('button', 'code-action insert', 'Insert');
    insert.title = 'Insert at the cursor in the editor';
    insert.addEventListener('click', () => actions.insert(source));
    bar.append(el('span', 'code-lang', lang ?? ''), copy, insert);
    const wrap = el('div', 'codeblock');
    pre.replaceWith(wrap);
    wrap.append(bar, pre);
  }
}

function assistant(text: string, thinking: string, actions: Actions): HTMLElement {
  const box = el('div', 'msg assistant');
  if (thinking) {
    const details = el('details', 'thinking');
    details.append(el('summary', '', 'Thinking'), el('div', 'thinking-text', thinking));
    box.append(details);
  }
  if (text) {
    const body = el('div', 'markdown');
    body.innerHTML = markdown(text);
    enhanceCode(body, actions);
    box.append(body);
  }
  return box;
}

function tool(item: ToolItem, actions: Actions): HTMLElement {
  const card = el('div', `tool kind-${item.toolKind} status-${item.status}`);
  card.dataset.toolCallId = item.id;
  const head = el('div', 'tool-head');
  head.append(el('span', 'tool-icon', KIND_ICON[item.toolKind] ?? '•'), el('span', 'tool-title', item.title),
    el('span', `badge ${item.status}`, item.status.replace('_', ' ')));
  card.append(head);
  if (item.diff) card.append(diff(item.diff));
  const url = fetchUrl(item);
  // A web_fetch's question carries its URL as `command` too: shown once, as the URL.
  if (item.confirm?.command && item.confirm.command !== url) card.append(el('pre', 'command', item.confirm.command));
  if (url) card.append(el('div', 'fetch-url', url));
  if (item.error) card.append(el('div', 'tool-error', item.error));
  if (item.children?.length) card.append(subagent(item.children, actions));
  const details = el('details', 'tool-details');
  details.append(el('summary', '', 'Details'), el('pre', 'tool-input', JSON.stringify(item.input, null, 2)));
  if (item.output) details.append(el('pre', 'tool-output', item.output));
  card.append(details);
  if (item.confirm?.answered) card.append(el('div', 'confirm answered', ANSWERED_LABEL[item.confirm.answered]));
  else if (item.confirm && item.status === 'awaiting_confirmation') card.append(confirmation(item, actions));
  return card;
}

/** The URL a `web_fetch` call (tool kind `fetch`) asks for, shown on its card and in its confirmation. */
function fetchUrl(item: ToolItem): string | undefined {
  const url = item.input?.url;
  return (item.toolKind === 'fetch' || item.name === 'web_fetch') && typeof url === 'string' ? url : undefined;
}

/** A `task` call's subagent: its tool calls, collapsed under one line that counts them and says how many run. */
function subagent(children: ToolItem[], actions: Actions): HTMLElement {
  const details = el('details', 'subagent');
  const running = children.filter((c) => c.status === 'running' || c.status === 'pending').length;
  details.append(el('summary', '', `Subagent: ${plural(children.length, 'tool call')}${running ? `, ${running} running` : ''}`));
  for (const child of children) details.append(tool(child, actions));
  return details;
}

function confirmation(item: ToolItem, actions: Actions): HTMLElement {
  const confirm = item.confirm!;
  const box = el('div', 'confirm');
  const question = item.toolKind === 'edit' ? 'Apply this edit?'
    : item.toolKind === 'execute' ? 'Run this command?'
      : fetchUrl(item) ? 'Fetch this page?' : `Allow ${item.name}?`;
  box.append(el('span', 'confirm-question', question));
  for (const decision of OFFERED.filter((d) => confirm.options.includes(d))) {
    const button = el('button', decision.startsWith('allow') ? 'primary' : 'secondary', DECISION_LABEL[decision]);
    button.dataset.decision = decision;
    button.addEventListener('click', () => actions.confirm(item.id, decision));
    box.append(button);
  }
  return box;
}

/** A unified diff with added, removed and hunk lines coloured. */
function diff(text: string): HTMLElement {
  const pre = el('pre', 'diff');
  for (const line of text.replace(/\n$/, '').split('\n')) {
    const cls = line.startsWith('+++') || line.startsWith('---') ? 'file'
      : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'hunk' : 'ctx';
    pre.append(el('span', cls, line + '\n'));
  }
  return pre;
}

const STOP_LABEL: Record<ChatResult['stopReason'], string> = {
  end_turn: 'Done', max_turns: 'Stopped at the turn limit', max_tokens: 'Stopped: the reply hit the token limit',
  refusal: 'The model declined', aborted: 'Stopped', disabled: 'Chat is disabled (maxTurns is 0)', error: 'Failed',
};

function result(r: ChatResult, actions: Actions): HTMLElement {
  const m = r.metadata;
  const box = el('div', `result ${r.stopReason}`);
  const tokens = (m.usage.inputTokens ?? 0) + (m.usage.outputTokens ?? 0);
  box.append(el('span', 'result-label', STOP_LABEL[r.stopReason] ?? r.stopReason),
    el('span', 'result-meta', ` · ${plural(m.turnsCount, 'turn')} · ${plural(m.toolCallsCount, 'tool call')}`
      + ` · ${(m.durationMs / 1000).toFixed(1)} s · ${tokens.toLocaleString('en')} tokens`));
  box.title = `input ${(m.usage.inputTokens ?? 0).toLocaleString('en')}, output ${(m.usage.outputTokens ?? 0).toLocaleString('en')}, `
    + `cache read ${(m.usage.cacheReadInputTokens ?? 0).toLocaleString('en')}, cache write ${(m.usage.cacheCreationInputTokens ?? 0).toLocaleString('en')}`;
  if (r.error) {
    box.append(el('div', 'result-error', r.error.message));
    if (r.error.type === 'initialization_failed') {
      const button = el('button', 'primary', 'Set API Key');
      button.addEventListener('click', () => actions.command('setApiKey'));
      box.append(button);
    }
  }
  return box;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls = '', text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}
