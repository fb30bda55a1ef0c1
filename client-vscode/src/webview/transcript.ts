/**
 * The chat as data: a list of items built from the agent/update stream, a chat's result, or a session's
 * history. Pure (no DOM), so the webview can save it with setState and redraw it, and unit tests can check it.
 */
import { type AgentUpdate, type ChatImage, type ChatResult, type Decision, type HistoryMessage, IMAGE_TYPES, type ImageType,
  type PlanEntry, type ToolKind } from '../protocol';

/** How a chat ended, as agent/history reports it on assistant messages (protocol 1.1). */
interface ChatEnd { stopReason: ChatResult['stopReason']; usage: ChatResult['metadata']['usage']; durationMs?: number }

export type ToolStatus = 'pending' | 'awaiting_confirmation' | 'running' | 'completed' | 'failed' | 'rejected' | 'cancelled';

export interface ToolItem {
  kind: 'tool';
  id: string;
  name: string;
  title: string;
  toolKind: ToolKind;
  input: Record<string, unknown>;
  status: ToolStatus;
  output?: string;
  error?: string;
  diff?: string;
  /** Set by a confirmation_request; `answered` once the user clicked. */
  confirm?: { options: Decision[]; command?: string; answered?: Decision };
  /** A `task` call's subagent: its own tool calls (updates carrying this call's id as `parentToolCallId`). */
  children?: ToolItem[];
}

export type Item =
  | { kind: 'user'; text: string; images?: ChatImage[] }
  | { kind: 'assistant'; text: string; thinking: string }
  | ToolItem
  | { kind: 'notice'; level: 'info' | 'warning'; message: string }
  | { kind: 'result'; result: ChatResult }
  | { kind: 'error'; message: string; details?: string; restart?: boolean };

export class Transcript {
  /** Where the running chat's items begin (its user message). */
  private chatStart = 0;
  /** The tool items the last finish() ended (to redraw them). */
  settled: number[] = [];

  /** `plan`: the agent's latest plan (`todo_write`), shown pinned above the chat. */
  constructor(public items: Item[] = [], public plan: PlanEntry[] = []) {}

  /** Adds the user's message (with the images it carries); returns the index of the new item. */
  user(text: string, images: ChatImage[] = []): number {
    this.chatStart = this.items.length;
    return this.push({ kind: 'user', text, ...(images.length ? { images } : {}) });
  }

  /** Applies one streamed update; returns the index of the item it added or changed, or -1 (a `plan` update
   * changes `plan`, not an item). */
  apply(update: AgentUpdate): number {
    if (update.parentToolCallId) return this.applyNested(update.parentToolCallId, update);
    switch (update.kind) {
      case 'plan':
        this.plan = update.entries.map((e) => ({ content: e.content, status: e.status }));
        return -1;
      case 'text_delta': return this.appendAssistant('text', update.text);
      case 'thinking_delta': return this.appendAssistant('thinking', update.text);
      case 'tool_call':
        return this.push({
          kind: 'tool', id: update.toolCallId, name: update.name, title: update.title || update.name,
          toolKind: update.toolKind, input: update.input, status: 'pending',
        });
      case 'tool_call_update': {
        const i = this.findTool(update.toolCallId);
        if (i < 0) return -1;
        const tool = this.items[i] as ToolItem;
        tool.status = update.status;
        if (update.output != null) tool.output = update.output;
        if (update.error != null) tool.error = update.error;
        if (update.diff != null) tool.diff = update.diff;
        return i;
      }
      case 'confirmation_request': {
        const i = this.findTool(update.toolCallId);
        if (i < 0) return -1;
        const tool = this.items[i] as ToolItem;
        tool.status = 'awaiting_confirmation';
        if (update.diff != null) tool.diff = update.diff;
        tool.confirm = {
          options: update.options ?? ['allow_once', 'allow_always', 'reject_once'],
          ...(update.command ? { command: update.command } : {}),
        };
        return i;
      }
      case 'notice':
        return this.push({ kind: 'notice', level: update.level ?? 'info', message: update.message });
      default:  // turn_start, usage: shown in the status line, not in the transcript
        return -1;
    }
  }

  /** A subagent's update: its tool calls go under the `task` card they belong to (the card is redrawn); its
   * text, thinking and usage are not shown (its final text is the task's result). */
  private applyNested(parent: string, update: AgentUpdate): number {
    const i = this.findTool(parent);
    if (i < 0) return -1;
    const task = this.items[i] as ToolItem;
    if (update.kind === 'tool_call') {
      (task.children ??= []).push({
        kind: 'tool', id: update.toolCallId, name: update.name, title: update.title || update.name,
        toolKind: update.toolKind, input: update.input, status: 'pending',
      });
      return i;
    }
    if (update.kind === 'tool_call_update') {
      const child = task.children?.find((c) => c.id === update.toolCallId);
      if (!child) return -1;
      child.status = update.status;
      if (update.output != null) child.output = update.output;
      if (update.error != null) child.error = update.error;
      if (update.diff != null) child.diff = update.diff;
      return i;
    }
    return -1;
  }

  /** Records the user's answer to a confirmation; returns the tool's index. */
  answer(toolCallId: string, decision: Decision): number {
    const i = this.findTool(toolCallId);
    const tool = this.items[i] as ToolItem | undefined;
    if (tool?.confirm) tool.confirm.answered = decision;
    return i;
  }

  /** The chat's answer. Its finalMessage is shown only if no text streamed (nothing is lost either way). */
  finish(result: ChatResult): number {
    this.settled = this.settle();
    const streamed = this.items.slice(this.chatStart).some((it) => it.kind === 'assistant' && it.text);
    if (!streamed && result.finalMessage) this.push({ kind: 'assistant', text: result.finalMessage, thinking: '' });
    return this.push({ kind: 'result', result });
  }

  notice(level: 'info' | 'warning', message: string): number {
    return this.push({ kind: 'notice', level, message });
  }

  /** The 0-based index, among the session's chats as the server counts them, of the chat item `i` belongs to
   * (-1: before any chat), and whether it is the last chat. A chat that failed because the server died is not
   * one of the server's chats. */
  chatOf(i: number): { chat: number; last: boolean } {
    let chat = -1;
    let failed = false;
    for (let k = 0; k <= i && k < this.items.length; k++) {
      const it = this.items[k];
      if (it.kind === 'user') { chat += failed ? 0 : 1; failed = false; }
      if (it.kind === 'error' && it.restart && k < i) failed = true;
    }
    const last = !this.items.slice(i + 1).some((it) => it.kind === 'user');
    return { chat, last };
  }

  error(message: string): number {
    return this.push({ kind: 'error', message });
  }

  /** The running chat failed without an answer (the server died): its open calls end, with a Restart offer. */
  fail(message: string, details?: string): number[] {
    const changed = this.settle();
    return [...changed, this.push({ kind: 'error', message, ...(details ? { details } : {}), restart: true })];
  }

  /** Ends the running chat's tool calls that have no terminal status, so no confirmation is left to answer
   * for a chat that is over; returns the indexes it changed. */
  private settle(): number[] {
    const changed: number[] = [];
    this.items.forEach((it, i) => {
      if (i < this.chatStart || it.kind !== 'tool') return;
      const open = (t: ToolItem) => ['pending', 'awaiting_confirmation', 'running'].includes(t.status);
      const ended = [it, ...(it.children ?? [])].filter(open);
      ended.forEach((t) => { t.status = 'cancelled'; });
      if (ended.length) changed.push(i);
    });
    return changed;
  }

  /** A session's history (agent/history), as it would have streamed, with its latest plan. */
  static fromHistory(messages: HistoryMessage[], plan: PlanEntry[] = []): Transcript {
    const t = new Transcript([], plan.map((e) => ({ content: e.content, status: e.status })));
    // Protocol 1.1 (§8): assistant messages carry their chat's usage, stopReason and duration; a chat's footer
    // is drawn from them where the server sends them.
    let chat: { turns: number; tools: number; denied: number; end?: ChatEnd } | undefined;
    const footer = () => {
      if (chat?.end) {
        const { stopReason, usage, durationMs } = chat.end;
        const metadata = { turnsCount: chat.turns, toolCallsCount: chat.tools, deniedToolCalls: chat.denied,
          durationMs: durationMs ?? 0, usage } as ChatResult['metadata'];
        t.push({ kind: 'result', result: { sessionId: '', stopReason, finalMessage: '', metadata } });
      }
      chat = undefined;
    };
    for (const m of messages) {
      if (m.role === 'user') {
        footer();
        // Images came with agent/history after protocol 1.2 (an extension of §2): drawn as when they were sent.
        t.user(m.content, (m.images ?? []).filter((im): im is ChatImage => IMAGE_TYPES.includes(im.mimeType as ImageType)));
        chat = { turns: 0, tools: 0, denied: 0 };
      } else {
        if (m.content) t.push({ kind: 'assistant', text: m.content, thinking: '' });
        const end = m as HistoryMessage & Partial<ChatEnd>;
        if (chat) {
          chat.turns += 1;
          chat.tools += m.toolCalls?.length ?? 0;
          chat.denied += m.toolCalls?.filter((c) => c.status === 'rejected').length ?? 0;
          if (end.stopReason && end.usage) chat.end = { stopReason: end.stopReason, usage: end.usage, durationMs: end.durationMs };
        }
      }
      for (const c of m.toolCalls ?? []) {
        t.push({
          kind: 'tool', id: c.toolCallId, name: c.name, title: c.title || c.name, toolKind: c.toolKind,
          input: c.input, status: c.status,
          ...(c.output != null ? { output: c.output } : {}),
          ...(c.error != null ? { error: c.error } : {}),
          ...(c.diff != null ? { diff: c.diff } : {}),
        });
      }
    }
    footer();
    return t;
  }

  private appendAssistant(field: 'text' | 'thinking', text: string): number {
    const last = this.items[this.items.length - 1];
    // Thinking that follows text belongs to a new turn, so it starts a new block above that turn's text.
    if (last?.kind === 'assistant' && !(field === 'thinking' && last.text)) {
      last[field] += text;
      return this.items.length - 1;
    }
    return this.push({ kind: 'assistant', text: field === 'text' ? text : '', thinking: field === 'thinking' ? text : '' });
  }

  private findTool(id: string): number {
    return this.items.findIndex((it) => it.kind === 'tool' && it.id === id);
  }

  private push(item: Item): number {
    this.items.push(item);
    return this.items.length - 1;
  }
}
