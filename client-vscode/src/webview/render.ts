/**
 * Draws transcript items as DOM. Markdown goes through marked then DOMPurify (the model's text is untrusted);
 * everything else is built with textContent, never innerHTML.
 */
import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/common';
import { Marked } from 'marked';
import type { PanelCommand } from '../messages';
import type { ChatResult, Decision } from '../protocol';
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
  read: '◉', search: '⌕', edit: '✎', execute: '›_', other: '•',
};

export function renderItem(item: Item, actions: Actions): HTMLElement {
  switch (item.kind) {
    case 'user': return el('div', 'msg user', item.text);
    case 'assistant': return assistant(item.text, item.thinking, actions);
    case 'tool': return tool(item, actions);
    case 'notice': return el('div', `notice ${item.level}`, item.message);
    case 'result': return result(item.result, actions);
    case 'error': return failure(item, actions);
  }
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
  if (item.confirm?.command) card.append(el('pre', 'command', item.confirm.command));
  if (item.error) card.append(el('div', 'tool-error', item.error));
  const details = el('details', 'tool-details');
  details.append(el('summary', '', 'Details'), el('pre', 'tool-input', JSON.stringify(item.input, null, 2)));
  if (item.output) details.append(el('pre', 'tool-output', item.output));
  card.append(details);
  if (item.confirm?.answered) card.append(el('div', 'confirm answered', ANSWERED_LABEL[item.confirm.answered]));
  else if (item.confirm && item.status === 'awaiting_confirmation') card.append(confirmation(item, actions));
  return card;
}

function confirmation(item: ToolItem, actions: Actions): HTMLElement {
  const confirm = item.confirm!;
  const box = el('div', 'confirm');
  const question = item.toolKind === 'edit' ? 'Apply this edit?'
    : item.toolKind === 'execute' ? 'Run this command?' : `Allow ${item.name}?`;
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
