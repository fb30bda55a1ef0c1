import { describe, expect, it } from 'vitest';
import type { AgentUpdate, ChatResult } from '../protocol';
import { Transcript } from './transcript';

const META = {
  turnsCount: 2, toolCallsCount: 1, deniedToolCalls: 0, durationMs: 40,
  usage: { inputTokens: 20, outputTokens: 9, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
};
const DIFF = '--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';

describe('Transcript', () => {
  it('builds the items of a chat with thinking, a confirmed edit and text from its updates', () => {
    const t = new Transcript();
    t.user('change x');
    const updates: AgentUpdate[] = [
      { kind: 'turn_start', turn: 1, maxTurns: 25 },
      { kind: 'thinking_delta', text: 'Edit ' },
      { kind: 'thinking_delta', text: 'a.py.' },
      { kind: 'text_delta', text: 'Editing.' },
      { kind: 'usage', inputTokens: 10, outputTokens: 4, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
      { kind: 'tool_call', toolCallId: 't1', name: 'edit_file', title: 'Edit a.py', toolKind: 'edit', input: { path: 'a.py' } },
      { kind: 'tool_call_update', toolCallId: 't1', status: 'awaiting_confirmation' },
      { kind: 'confirmation_request', toolCallId: 't1', name: 'edit_file', title: 'Edit a.py', input: {}, diff: DIFF,
        options: ['allow_once', 'allow_always', 'reject_once', 'reject_always'] },
      { kind: 'tool_call_update', toolCallId: 't1', status: 'running', output: null },
      { kind: 'tool_call_update', toolCallId: 't1', status: 'completed', output: 'Edited a.py', diff: DIFF },
      { kind: 'turn_start', turn: 2, maxTurns: 25 },
      { kind: 'thinking_delta', text: 'Done.' },
      { kind: 'text_delta', text: 'x is **2**.' },
      { kind: 'notice', level: 'info', message: 'compacted' },
      { kind: 'tool_call_update', toolCallId: 'unknown', status: 'failed' },
    ];
    expect(updates.map((u) => t.apply(u))).toEqual([-1, 1, 1, 1, -1, 2, 2, 2, 2, 2, -1, 3, 3, 4, -1]);
    expect(t.answer('t1', 'allow_once')).toBe(2);
    const result: ChatResult = { sessionId: 's', stopReason: 'end_turn', finalMessage: 'x is **2**.', metadata: META };
    expect(t.finish(result)).toBe(5);
    expect(t.items).toEqual([
      { kind: 'user', text: 'change x' },
      { kind: 'assistant', thinking: 'Edit a.py.', text: 'Editing.' },
      { kind: 'tool', id: 't1', name: 'edit_file', title: 'Edit a.py', toolKind: 'edit', input: { path: 'a.py' },
        status: 'completed', output: 'Edited a.py', diff: DIFF,
        confirm: { options: ['allow_once', 'allow_always', 'reject_once', 'reject_always'], answered: 'allow_once' } },
      { kind: 'assistant', thinking: 'Done.', text: 'x is **2**.' },
      { kind: 'notice', level: 'info', message: 'compacted' },
      { kind: 'result', result },
    ]);
  });

  it('shows a symbol edit\'s confirmation with its diff, as an edit_file one', () => {
    const t = new Transcript();
    t.user('rename it');
    const input = { path: 'a.py', symbol: 'f', token: 'k1', body: 'x = 2' };
    t.apply({ kind: 'tool_call', toolCallId: 't1', name: 'replace_symbol', title: 'Replace f in a.py', toolKind: 'edit', input });
    t.apply({ kind: 'confirmation_request', toolCallId: 't1', name: 'replace_symbol', title: 'Replace f in a.py', input,
      diff: DIFF, options: ['allow_once', 'allow_always', 'reject_once', 'reject_always'] });
    expect(t.items[1]).toEqual({ kind: 'tool', id: 't1', name: 'replace_symbol', title: 'Replace f in a.py', toolKind: 'edit',
      input, status: 'awaiting_confirmation', diff: DIFF,
      confirm: { options: ['allow_once', 'allow_always', 'reject_once', 'reject_always'] } });
  });

  it('shows finalMessage when no text streamed in this chat, and not otherwise', () => {
    const t = new Transcript();
    t.user('one');
    t.apply({ kind: 'text_delta', text: 'streamed' });
    t.finish({ sessionId: 's', stopReason: 'end_turn', finalMessage: 'streamed', metadata: META });
    t.user('two');
    const aborted: ChatResult = { sessionId: 's', stopReason: 'max_turns', finalMessage: 'Summary.', metadata: META };
    t.finish(aborted);
    expect(t.items.map((i) => i.kind === 'assistant' ? `assistant:${i.text}` : i.kind))
      .toEqual(['user', 'assistant:streamed', 'result', 'user', 'assistant:Summary.', 'result']);
  });

  it('redraws a session from agent/history', () => {
    const t = Transcript.fromHistory([
      { role: 'user', content: 'fix it' },
      { role: 'assistant', content: 'Fixed.', toolCalls: [{ toolCallId: 't1', name: 'run_command', title: 'Run ls',
        toolKind: 'execute', input: { command: 'ls' }, status: 'rejected', error: 'declined', output: null }] },
    ]);
    expect(t.items).toEqual([
      { kind: 'user', text: 'fix it' },
      { kind: 'assistant', text: 'Fixed.', thinking: '' },
      { kind: 'tool', id: 't1', name: 'run_command', title: 'Run ls', toolKind: 'execute', input: { command: 'ls' },
        status: 'rejected', error: 'declined' },
    ]);
  });

  it('draws each chat\'s footer from the usage and stop reason history carries (protocol 1.1)', () => {
    const usage = { inputTokens: 30, outputTokens: 7, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
    const t = Transcript.fromHistory([
      { role: 'user', content: 'read it' },
      { role: 'assistant', content: '', toolCalls: [{ toolCallId: 't1', name: 'read_file', title: 'Read a.py',
        toolKind: 'read', input: { path: 'a.py' }, status: 'completed', output: '1: x = 1' }], usage, stopReason: 'end_turn', durationMs: 1200 },
      { role: 'assistant', content: 'x is 1.', usage, stopReason: 'end_turn', durationMs: 1200 },
      { role: 'user', content: 'old chat without usage' },
      { role: 'assistant', content: 'ok' },
    ] as Parameters<typeof Transcript.fromHistory>[0]);
    expect(t.items.map((it) => it.kind)).toEqual(['user', 'tool', 'assistant', 'result', 'user', 'assistant']);
    expect(t.items[3]).toEqual({ kind: 'result', result: { sessionId: '', stopReason: 'end_turn', finalMessage: '',
      metadata: { turnsCount: 2, toolCallsCount: 1, deniedToolCalls: 0, durationMs: 1200, usage } } });
    expect(t.items[1]).toMatchObject({ kind: 'tool', status: 'completed', output: '1: x = 1' });
  });

  it('a chat that ends (stopped, or its server died) leaves no question to answer', () => {
    const t = new Transcript();
    t.user('edit');
    t.apply({ kind: 'tool_call', toolCallId: 't1', name: 'edit_file', title: 'Edit a.py', toolKind: 'edit', input: {} });
    t.apply({ kind: 'confirmation_request', toolCallId: 't1', name: 'edit_file', title: 'Edit a.py', input: {},
      options: ['allow_once', 'reject_once'] });
    const r: ChatResult = { sessionId: 's', stopReason: 'aborted', finalMessage: '', metadata: META };
    expect(t.finish(r)).toBe(2);
    expect(t.settled).toEqual([1]);
    expect(t.items[1]).toMatchObject({ kind: 'tool', status: 'cancelled' });
    t.user('again');
    t.apply({ kind: 'tool_call', toolCallId: 't2', name: 'run_command', title: 'Run', toolKind: 'execute', input: {} });
    expect(t.fail('The agent server stopped during this chat.', 'Traceback')).toEqual([4, 5]);
    expect(t.items.slice(4)).toMatchObject([{ kind: 'tool', status: 'cancelled' },
      { kind: 'error', message: 'The agent server stopped during this chat.', details: 'Traceback', restart: true }]);
    expect(t.items[1]).toMatchObject({ status: 'cancelled' });  // an earlier chat is not touched again
  });

  it('numbers each result by its chat (0-based) and knows the last chat, for "Revert this turn"', () => {
    const t = new Transcript();
    t.user('one');
    const first = t.finish(RESULT_FOR_REVERT);
    t.user('two');
    t.notice('info', 'between');
    const second = t.finish(RESULT_FOR_REVERT);
    t.user('crash');
    t.fail('The agent server stopped during this chat.');  // not a chat the server kept
    t.user('three');
    const third = t.finish(RESULT_FOR_REVERT);
    expect(t.chatOf(first)).toEqual({ chat: 0, last: false });
    expect(t.chatOf(second)).toEqual({ chat: 1, last: false });
    expect(t.chatOf(third)).toEqual({ chat: 2, last: true });
  });
});

const RESULT_FOR_REVERT: ChatResult = { sessionId: 's', stopReason: 'end_turn', finalMessage: '', metadata: META };

describe('Transcript: plan, subagents, images', () => {
  it('keeps the latest plan, and a subagent\'s tool calls under its task call', () => {
    const t = new Transcript();
    t.user('fix it');
    const updates: AgentUpdate[] = [
      { kind: 'plan', entries: [{ content: 'Find greet', status: 'in_progress' }, { content: 'Fix it', status: 'pending' }] },
      { kind: 'tool_call', toolCallId: 'task1', name: 'task', title: 'Task: find greet', toolKind: 'read', input: { description: 'find greet', prompt: 'Where is greet?' } },
      { kind: 'tool_call_update', toolCallId: 'task1', status: 'running' },
      { kind: 'turn_start', turn: 1, maxTurns: 25, parentToolCallId: 'task1' },
      { kind: 'text_delta', text: 'Searching.', parentToolCallId: 'task1' },
      { kind: 'tool_call', toolCallId: 's1', name: 'search', title: 'Search greet', toolKind: 'search', input: { pattern: 'greet' }, parentToolCallId: 'task1' },
      { kind: 'tool_call_update', toolCallId: 's1', status: 'completed', output: 'app.py:1: def greet', parentToolCallId: 'task1' },
      { kind: 'tool_call', toolCallId: 's2', name: 'read_file', title: 'Read app.py', toolKind: 'read', input: { path: 'app.py' }, parentToolCallId: 'task1' },
      { kind: 'tool_call_update', toolCallId: 'unknown', status: 'completed', parentToolCallId: 'task1' },
      { kind: 'tool_call', toolCallId: 'x', name: 'search', title: 'lost', toolKind: 'search', input: {}, parentToolCallId: 'nope' },
      { kind: 'plan', entries: [{ content: 'Find greet', status: 'completed' }, { content: 'Fix it', status: 'in_progress' }] },
    ];
    expect(updates.map((u) => t.apply(u))).toEqual([-1, 1, 1, -1, -1, 1, 1, 1, -1, -1, -1]);
    expect(t.plan).toEqual([{ content: 'Find greet', status: 'completed' }, { content: 'Fix it', status: 'in_progress' }]);
    expect(t.items).toEqual([
      { kind: 'user', text: 'fix it' },
      { kind: 'tool', id: 'task1', name: 'task', title: 'Task: find greet', toolKind: 'read',
        input: { description: 'find greet', prompt: 'Where is greet?' }, status: 'running', children: [
          { kind: 'tool', id: 's1', name: 'search', title: 'Search greet', toolKind: 'search', input: { pattern: 'greet' },
            status: 'completed', output: 'app.py:1: def greet' },
          { kind: 'tool', id: 's2', name: 'read_file', title: 'Read app.py', toolKind: 'read', input: { path: 'app.py' }, status: 'pending' },
        ] },
    ]);
    // The chat ends (aborted): the task and its open subagent call are cancelled.
    t.finish({ sessionId: 's', stopReason: 'aborted', finalMessage: '', metadata: META });
    expect(t.settled).toEqual([1]);
    const task = t.items[1] as Extract<(typeof t.items)[number], { kind: 'tool' }>;
    expect([task.status, ...task.children!.map((c) => c.status)]).toEqual(['cancelled', 'completed', 'cancelled']);
  });

  it('takes the plan of agent/history, and user messages with their images', () => {
    const t = Transcript.fromHistory([{ role: 'user', content: 'go' }], [{ content: 'Step', status: 'pending' }]);
    expect(t.plan).toEqual([{ content: 'Step', status: 'pending' }]);
    const u = new Transcript();
    u.user('see', [{ mimeType: 'image/png', data: 'AAAA' }]);
    u.user('plain');
    expect(u.items).toEqual([{ kind: 'user', text: 'see', images: [{ mimeType: 'image/png', data: 'AAAA' }] }, { kind: 'user', text: 'plain' }]);
  });

  it('redraws the images of agent/history\'s user messages as they were drawn when sent, in order', () => {
    const images = [{ mimeType: 'image/png', data: 'AAAA' }, { mimeType: 'image/gif', data: 'R0lG' }] as const;
    const t = Transcript.fromHistory([
      { role: 'user', content: 'what is this?', images: [...images] },
      { role: 'assistant', content: 'A screenshot.' },
      { role: 'user', content: '', images: [images[0]] },
      { role: 'user', content: 'plain' },
    ]);
    expect(t.items).toEqual([
      { kind: 'user', text: 'what is this?', images: [...images] },
      { kind: 'assistant', text: 'A screenshot.', thinking: '' },
      { kind: 'user', text: '', images: [images[0]] },
      { kind: 'user', text: 'plain' },
    ]);
  });
});
