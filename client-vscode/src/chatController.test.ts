import { describe, expect, it, vi } from 'vitest';
import { ResponseError } from 'vscode-jsonrpc';
import { type AgentConnection, type ChatHost, ChatController, describeRevert } from './chatController';
import type { MentionChoice, ToWebview } from './messages';
import type { AgentUpdate, ChatResult, UpdateParams } from './protocol';

const RESULT: ChatResult = {
  sessionId: 's1', stopReason: 'end_turn', finalMessage: 'Hello there',
  metadata: {
    turnsCount: 1, toolCallsCount: 0, deniedToolCalls: 0, durationMs: 12,
    usage: { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
  },
};

/** A server double: answers by method, records every request, and lets the test push agent/update. */
function fakeServer(answers: Record<string, (params: any) => unknown>) {
  const requests: [string, unknown][] = [];
  let listener: ((p: UpdateParams) => void) | undefined;
  const connection: AgentConnection = {
    async sendRequest(type, params) {
      requests.push([type.method, params]);
      const answer = answers[type.method];
      if (!answer) throw new ResponseError(-32601, `Unhandled method ${type.method}`);
      return answer(params) as any;
    },
    onNotification(type, handler) {
      expect(type.method).toBe('agent/update');
      listener = handler as (p: UpdateParams) => void;
      return { dispose: () => { listener = undefined; } };
    },
  };
  let seq = 0;
  const emit = (sessionId: string, update: AgentUpdate) => listener?.({ sessionId, seq: ++seq, update });
  return { connection, requests, emit };
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => { resolve = r; });
  return { promise, resolve };
}

/** The URIs each pickImages call was given (undefined: the file dialog). */
const asked: (string[] | undefined)[] = [];

function setup(answers: Record<string, (params: any) => unknown>, context?: ReturnType<ChatHost['context']>) {
  const posted: ToWebview[] = [];
  const host: ChatHost = {
    post: (m) => posted.push(m), reveal: vi.fn(), context: () => context, command: vi.fn(),
    workspace: () => 'file:///w', stderr: () => 'Traceback (most recent call last):\nMemoryError', copy: vi.fn(), insert: vi.fn(),
    mentionChoices: async () => CHOICES,
    pickImages: async (uris) => { asked.push(uris); return PICKED; },
  };
  const server = fakeServer(answers);
  const controller = new ChatController(host, 'default');
  return { posted, host, server, controller };
}

const SEL = { start: { line: 2, character: 0 }, end: { line: 6, character: 4 } };
const CHOICES: MentionChoice[] = [
  { kind: 'selection', uri: 'file:///w/a.py', range: SEL, label: 'a.py:3-7' },
  { kind: 'diagnostics', uri: 'file:///w/a.py', label: 'a.py' },
  { kind: 'file', uri: 'file:///w/src/b.py', label: 'src/b.py' },
];

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const PICKED = {
  images: [{ name: 'shot.png', bytes: 70, mimeType: 'image/png' as const, data: PNG }],
  problems: ['big.png cannot be sent: it is 6.0 MiB; the agent takes images of at most 5 MiB.'],
};

const tick = () => new Promise((r) => setTimeout(r, 0));
const SESSIONS = () => ({ sessions: [] });

describe('ChatController', () => {
  it('streams a new chat: adopts the session from its first update and forwards only that session', async () => {
    const chat = deferred<ChatResult>();
    const context = { activeUri: 'file:///w/a.py' };
    const { posted, server, controller } = setup({ 'agent/chat': () => chat.promise, 'agent/sessions': SESSIONS }, context);
    controller.attach(server.connection, { state: 'ready', features: [] });
    await tick();
    const sending = controller.send('  say hi  ');
    server.emit('s1', { kind: 'turn_start', turn: 1, maxTurns: 25 });
    server.emit('other', { kind: 'text_delta', text: 'not ours' });
    server.emit('s1', { kind: 'text_delta', text: 'Hello ' });
    server.emit('s1', { kind: 'text_delta', text: 'there' });
    chat.resolve(RESULT);
    await sending;
    expect(server.requests).toEqual([
      ['agent/sessions', { workspace: 'file:///w' }],
      ['agent/chat', { message: 'say hi', context, permissionMode: 'default' }],
      ['agent/sessions', { workspace: 'file:///w' }],
    ]);
    expect(posted).toEqual([
      { type: 'server', server: { state: 'ready', features: [] } },
      { type: 'sessions', sessions: [] },
      { type: 'models', models: null, selected: '' },  // no "models" in the server's features: no picker
      { type: 'busy', busy: true },
      { type: 'session', sessionId: 's1' },
      { type: 'update', update: { kind: 'turn_start', turn: 1, maxTurns: 25 } },
      { type: 'update', update: { kind: 'text_delta', text: 'Hello ' } },
      { type: 'update', update: { kind: 'text_delta', text: 'there' } },
      { type: 'done', result: RESULT },
      { type: 'busy', busy: false },
      { type: 'sessions', sessions: [] },
    ]);
    expect(controller.currentSessionId).toBe('s1');
    expect(controller.isRunning).toBe(false);
  });

  it('continues the session in the next chat, with the mode picked in the panel', async () => {
    const { server, controller } = setup({ 'agent/chat': () => RESULT, 'agent/sessions': SESSIONS });
    controller.attach(server.connection, { state: 'ready', features: [] });
    await controller.send('first');
    await controller.handle({ type: 'setMode', mode: 'plan' });
    await controller.handle({ type: 'setMode', mode: 'yolo' as never });  // not a mode: ignored
    await controller.handle({ type: 'send', text: 'second' });
    expect(server.requests.filter(([m]) => m === 'agent/chat').map(([, p]) => p)).toEqual([
      { message: 'first', permissionMode: 'default' },
      { sessionId: 's1', message: 'second', permissionMode: 'plan' },
    ]);
  });

  it('answers a confirmation with agent/confirmTool and brings the view forward', async () => {
    const chat = deferred<ChatResult>();
    const { host, server, controller } = setup({
      'agent/chat': () => chat.promise, 'agent/sessions': SESSIONS, 'agent/confirmTool': () => ({ accepted: true }),
    });
    controller.attach(server.connection, { state: 'ready', features: [] });
    const sending = controller.send('edit it');
    server.emit('s1', { kind: 'tool_call', toolCallId: 't1', name: 'edit_file', title: 'Edit a.py', toolKind: 'edit', input: {} });
    expect(host.reveal).not.toHaveBeenCalled();
    server.emit('s1', {
      kind: 'confirmation_request', toolCallId: 't1', name: 'edit_file', title: 'Edit a.py', input: {},
      options: ['allow_once', 'allow_always', 'reject_once', 'reject_always'],
    });
    expect(host.reveal).toHaveBeenCalledTimes(1);
    await controller.handle({ type: 'confirm', toolCallId: 't1', decision: 'allow_always' });
    chat.resolve(RESULT);
    await sending;
    expect(server.requests.map(([m]) => m)).toEqual(['agent/sessions', 'agent/chat', 'agent/confirmTool', 'agent/sessions']);
    expect(server.requests[2][1]).toEqual({ sessionId: 's1', toolCallId: 't1', decision: 'allow_always' });
  });

  it('passes on the index line of every session\'s completed language answer, and nothing else', async () => {
    const { host, server, controller } = setup({ 'agent/sessions': SESSIONS });
    const said: unknown[] = [];
    host.index = (status) => said.push(status);
    controller.attach(server.connection, { state: 'ready', features: [] });
    server.emit('other', { kind: 'tool_call_update', toolCallId: 't1', status: 'running', output: 'index: ready — early' });
    server.emit('other', { kind: 'tool_call_update', toolCallId: 't1', status: 'completed',
      output: 'a.py:1:5: greet\nindex: loading — `jedi` has not answered initialize yet' });
    server.emit('other', { kind: 'tool_call_update', toolCallId: 't2', status: 'completed', output: 'Edited a.py' });
    expect(said).toEqual([{ state: 'loading', why: '`jedi` has not answered initialize yet' }]);
  });

  it('stops with agent/abort; a stop before the session is known is sent once its first update names it', async () => {
    const chat = deferred<ChatResult>();
    const { server, controller } = setup({
      'agent/chat': () => chat.promise, 'agent/sessions': SESSIONS, 'agent/abort': () => ({ aborted: true }),
    });
    controller.attach(server.connection, { state: 'ready', features: [] });
    const sending = controller.send('long job');
    await controller.handle({ type: 'stop' });
    expect(server.requests.map(([m]) => m)).toEqual(['agent/sessions', 'agent/chat']);  // no session id yet
    server.emit('s9', { kind: 'turn_start', turn: 1, maxTurns: 25 });
    await tick();
    expect(server.requests.at(-1)).toEqual(['agent/abort', { sessionId: 's9' }]);
    chat.resolve({ ...RESULT, sessionId: 's9', stopReason: 'aborted', finalMessage: '' });
    await sending;
    await controller.stop();  // nothing running: nothing sent
    expect(server.requests.filter(([m]) => m === 'agent/abort')).toHaveLength(1);
  });

  it('refuses a second chat while one runs, and reports JSON-RPC errors in the panel', async () => {
    const chat = deferred<ChatResult>();
    let calls = 0;
    const { posted, server, controller } = setup({
      'agent/chat': () => (++calls === 1 ? chat.promise : Promise.reject(new ResponseError(-32602, 'message: must not be empty'))),
      'agent/sessions': SESSIONS,
    });
    controller.attach(server.connection, { state: 'ready', features: [] });
    await tick();
    const first = controller.send('one');
    await controller.send('two');
    expect(posted.at(-1)).toEqual({ type: 'error', message: 'A chat is already running: stop it first.' });
    chat.resolve(RESULT);
    await first;
    posted.length = 0;
    await controller.send('three');
    expect(posted).toEqual([
      { type: 'busy', busy: true },
      { type: 'error', message: 'message: must not be empty' },
      { type: 'busy', busy: false },
      { type: 'sessions', sessions: [] },
    ]);
  });

  it('hides the session list when the server has no agent/sessions, and asks only once', async () => {
    const { posted, server, controller } = setup({ 'agent/chat': () => RESULT });
    controller.attach(server.connection, { state: 'ready', features: [] });
    await tick();
    await controller.send('hi');
    expect(posted.filter((m) => m.type === 'sessions')).toEqual([
      { type: 'sessions', sessions: null }, { type: 'sessions', sessions: null },
    ]);
    expect(server.requests.map(([m]) => m)).toEqual(['agent/sessions', 'agent/chat']);
  });

  it('reopens a session from its history, and starts a new one', async () => {
    const messages = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello' }];
    const { posted, server, controller } = setup({
      'agent/history': () => ({ messages }), 'agent/sessions': SESSIONS, 'agent/chat': () => ({ ...RESULT, sessionId: 'old' }),
    });
    controller.attach(server.connection, { state: 'ready', features: [] });
    await controller.handle({ type: 'openSession', sessionId: 'old' });
    expect(posted.filter((m) => m.type === 'history')).toEqual([{ type: 'history', sessionId: 'old', messages }]);
    await controller.send('more');
    expect(server.requests.find(([m]) => m === 'agent/chat')?.[1]).toMatchObject({ sessionId: 'old' });
    await controller.handle({ type: 'newSession' });
    expect(posted.filter((m) => m.type === 'reset')).toEqual([{ type: 'reset' }]);
    expect(controller.currentSessionId).toBeUndefined();
  });

  it('restores the session and mode a reloaded webview saved', async () => {
    const { posted, server, controller } = setup({ 'agent/sessions': SESSIONS });
    controller.attach(server.connection, { state: 'ready', features: [] });
    await controller.handle({ type: 'ready', sessionId: 'saved', mode: 'acceptEdits' });
    expect(posted.find((m) => m.type === 'init')).toEqual({
      type: 'init', mode: 'acceptEdits', sessionId: 'saved', server: { state: 'ready', features: [] }, busy: false,
    });
  });

  it('says what to install when the server could not start, and sends nothing', async () => {
    const { posted, controller } = setup({});
    const message = 'agent-lsp was not found (agent-lsp). Install it with "pipx install agent-lsp-server".';
    controller.attach(undefined, { state: 'missing', message });
    await controller.send('hi');
    expect(posted).toEqual([
      { type: 'server', server: { state: 'missing', message } },
      { type: 'error', message },
      { type: 'busy', busy: false },  // never "Working…" without a chat
    ]);
  });

  it('a server that dies mid-chat: the chat fails with its last stderr lines, whichever comes first', async () => {
    for (const order of ['rejectFirst', 'crashFirst']) {
      const chat = deferred<ChatResult>();
      let reject!: (e: unknown) => void;
      const { posted, server, controller } = setup({
        'agent/sessions': SESSIONS, 'agent/chat': () => new Promise((_, r) => { reject = r; void chat; }),
      });
      controller.attach(server.connection, { state: 'ready', features: [] });
      await tick();
      posted.length = 0;
      const sending = controller.send('hi');
      const crashed = { state: 'crashed' as const, message: 'The agent server stopped.' };
      const lost = new ResponseError(-32097, 'Pending response rejected since connection got disposed');
      if (order === 'crashFirst') controller.setServerState(crashed);
      reject(lost);
      await sending;
      if (order === 'rejectFirst') controller.setServerState(crashed);
      const failed = { type: 'chatFailed', message: 'The agent server stopped during this chat.',
        details: 'Traceback (most recent call last):\nMemoryError' };
      expect(posted.filter((m) => m.type !== 'server')).toEqual([
        { type: 'busy', busy: true }, failed, { type: 'busy', busy: false }, { type: 'busy', busy: false },
      ]);
      expect(controller.isRunning).toBe(false);
    }
  });

  it('refuses a message over 1 MB with its size, and stays ready', async () => {
    const { posted, server, controller } = setup({ 'agent/sessions': SESSIONS });
    controller.attach(server.connection, { state: 'ready', features: [] });
    await tick();
    posted.length = 0;
    await controller.send('x'.repeat(1_000_001));
    expect(posted).toEqual([
      { type: 'error', message: 'The message is 1,000,001 characters; the panel sends at most 1,000,000. Save the text to a file and ask the agent to read it.' },
      { type: 'busy', busy: false },
    ]);
    expect(server.requests.map(([m]) => m)).toEqual(['agent/sessions']);
  });

  it('offers the models of agent/models when the server lists the feature, and sends the pick', async () => {
    const { posted, server, controller } = setup({
      'agent/sessions': SESSIONS, 'agent/chat': () => RESULT,
      'agent/models': () => ({ models: [{ id: 'a', displayName: 'A', provider: 'anthropic' }, { id: 'b', provider: 'anthropic' }], default: 'a' }),
    });
    controller.attach(server.connection, { state: 'ready', features: ['models'] });
    await tick();
    expect(posted.filter((m) => m.type === 'models')).toEqual([
      { type: 'models', models: [{ id: 'a', displayName: 'A' }, { id: 'b' }], selected: 'a' }]);
    await controller.handle({ type: 'setModel', model: 'b' });
    await controller.send('hi');
    expect(server.requests.find(([m]) => m === 'agent/chat')).toEqual(['agent/chat', { message: 'hi', permissionMode: 'default', model: 'b' }]);
  });

  it('with agent/newSession, a new chat knows its session before the first update', async () => {
    const chat = deferred<ChatResult>();
    const { posted, server, controller } = setup({
      'agent/sessions': SESSIONS, 'agent/newSession': () => ({ sessionId: 'n1' }), 'agent/chat': () => chat.promise,
      'agent/abort': () => ({ aborted: true }),
    });
    controller.attach(server.connection, { state: 'ready', features: ['newSession'] });
    await tick();
    const sending = controller.send('hi');
    await tick();
    expect(controller.currentSessionId).toBe('n1');
    await controller.stop();
    chat.resolve({ ...RESULT, sessionId: 'n1', stopReason: 'aborted' });
    await sending;
    expect(server.requests.map(([m, p]) => [m, p])).toEqual([
      ['agent/sessions', { workspace: 'file:///w' }], ['agent/newSession', {}],
      ['agent/chat', { sessionId: 'n1', message: 'hi', permissionMode: 'default' }],
      ['agent/abort', { sessionId: 'n1' }], ['agent/sessions', { workspace: 'file:///w' }],
    ]);
    expect(posted.filter((m) => m.type === 'session')).toEqual([{ type: 'session', sessionId: 'n1' }]);
  });

  it('drops the old server\'s updates after a restart', async () => {
    const first = setup({ 'agent/sessions': SESSIONS });
    const second = fakeServer({ 'agent/sessions': SESSIONS });
    first.controller.attach(first.server.connection, { state: 'ready', features: [] });
    first.controller.attach(second.connection, { state: 'ready', features: [] });
    await first.controller.handle({ type: 'ready', sessionId: 's1' });
    first.posted.length = 0;
    first.server.emit('s1', { kind: 'text_delta', text: 'stale' });
    second.emit('s1', { kind: 'text_delta', text: 'fresh' });
    expect(first.posted).toEqual([{ type: 'update', update: { kind: 'text_delta', text: 'fresh' } }]);
  });

  it('reverts the shown session back to before chat k, and shows what was reverted and refused', async () => {
    const { posted, server, controller } = setup({
      'agent/chat': () => RESULT, 'agent/sessions': SESSIONS,
      'agent/revert': () => ({ reverted: ['file:///w/a.py'], refused: [{ uri: 'file:///w/b%20c.py', reason: 'changed since the chat' }] }),
    });
    controller.attach(server.connection, { state: 'ready', features: ['revert'] });
    await controller.send('edit');
    posted.length = 0;
    await controller.handle({ type: 'revert', toChat: 1 });
    expect(server.requests.at(-1)).toEqual(['agent/revert', { sessionId: 's1', toChat: 1 }]);
    expect(posted).toEqual([{ type: 'notice', level: 'warning',
      message: 'Reverted a.py.\nNot reverted: b c.py (changed since the chat)' }]);
  });

  it('a revert with nothing to revert (-32602) is a plain message, not an error', async () => {
    const { posted, server, controller } = setup({
      'agent/chat': () => RESULT, 'agent/sessions': SESSIONS,
      'agent/revert': () => { throw new ResponseError(-32602, 'nothing to revert in session s1'); },
    });
    controller.attach(server.connection, { state: 'ready', features: ['revert'] });
    await controller.send('edit');
    posted.length = 0;
    await controller.handle({ type: 'revert', toChat: 0 });
    expect(posted).toEqual([{ type: 'notice', level: 'info', message: 'nothing to revert in session s1' }]);
    expect(describeRevert({ reverted: [], refused: [] })).toBe('Nothing was reverted.');
  });

  it('shows a chat it did not start (a code action\'s command): switches to its session, its request, updates, result', async () => {
    const { posted, server, controller } = setup({ 'agent/chat': () => RESULT, 'agent/sessions': SESSIONS });
    controller.attach(server.connection, { state: 'ready', features: [] });
    await controller.send('first');  // the panel shows s1
    posted.length = 0;
    const run = deferred<ChatResult>();
    const done = controller.external('Fix with agent: Property expected', () => run.promise);
    server.emit('s2', { kind: 'text_delta', text: 'Fixing' });
    const result = { ...RESULT, sessionId: 's2' };
    run.resolve(result);
    expect(await done).toBe(result);
    expect(posted.filter((m) => m.type !== 'sessions')).toEqual([
      { type: 'busy', busy: true },
      { type: 'reset' },
      { type: 'session', sessionId: 's2' },
      { type: 'external', text: 'Fix with agent: Property expected' },
      { type: 'update', update: { kind: 'text_delta', text: 'Fixing' } },
      { type: 'done', result },
      { type: 'busy', busy: false },
    ]);
    expect(controller.currentSessionId).toBe('s2');
  });

  it('answers listMentions with the host\'s choices, and sends chips as context.mentions, without their labels', async () => {
    const context = { activeUri: 'file:///w/a.py' };
    const { posted, server, controller } = setup({ 'agent/chat': () => RESULT, 'agent/sessions': SESSIONS }, context);
    controller.attach(server.connection, { state: 'ready', features: [] });
    await tick();
    await controller.handle({ type: 'listMentions' });
    expect(posted.filter((m) => m.type === 'mentionChoices')).toEqual([{ type: 'mentionChoices', choices: CHOICES }]);
    await controller.handle({ type: 'send', text: 'why?', mentions: CHOICES });
    await controller.handle({ type: 'send', text: 'and now?' });  // the chips went with the first message only
    expect(server.requests.filter(([m]) => m === 'agent/chat')).toEqual([
      ['agent/chat', { message: 'why?', permissionMode: 'default', context: { activeUri: 'file:///w/a.py', mentions: [
        { kind: 'selection', uri: 'file:///w/a.py', range: SEL },
        { kind: 'diagnostics', uri: 'file:///w/a.py' },
        { kind: 'file', uri: 'file:///w/src/b.py' },
      ] } }],
      ['agent/chat', { sessionId: 's1', message: 'and now?', context, permissionMode: 'default' }],
    ]);
  });

  it('sends mentions with no active editor as a context of mentions alone', async () => {
    const { server, controller } = setup({ 'agent/chat': () => RESULT, 'agent/sessions': SESSIONS });
    controller.attach(server.connection, { state: 'ready', features: [] });
    await controller.send('read it', [CHOICES[2]]);
    expect(server.requests.find(([m]) => m === 'agent/chat')).toEqual(
      ['agent/chat', { message: 'read it', context: { mentions: [{ kind: 'file', uri: 'file:///w/src/b.py' }] }, permissionMode: 'default' }]);
  });

  it('sends images as agent/chat images, alone too, and refuses a message whose image the server would refuse', async () => {
    const { posted, server, controller } = setup({ 'agent/chat': () => RESULT, 'agent/sessions': SESSIONS });
    controller.attach(server.connection, { state: 'ready', features: [] });
    await controller.handle({ type: 'send', text: 'what is wrong here?', images: [{ mimeType: 'image/png', data: PNG }] });
    const big = 'A'.repeat(Math.ceil((5 * 1024 * 1024 + 3) / 3) * 4);
    await controller.handle({ type: 'send', text: 'and this?', images: [{ mimeType: 'image/png', data: big }] });
    await controller.handle({ type: 'send', text: 'a bitmap', images: [{ mimeType: 'image/bmp' as 'image/png', data: PNG }] });
    await controller.handle({ type: 'send', text: '  ', images: [{ mimeType: 'image/png', data: PNG }] });
    expect(server.requests.filter(([m]) => m === 'agent/chat')).toEqual([
      ['agent/chat', { message: 'what is wrong here?', images: [{ mimeType: 'image/png', data: PNG }], permissionMode: 'default' }],
      ['agent/chat', { sessionId: 's1', message: '', images: [{ mimeType: 'image/png', data: PNG }], permissionMode: 'default' }],
    ]);
    expect(posted.filter((m) => m.type === 'error')).toEqual([
      { type: 'error', message: 'Image 1 cannot be sent: it is 5.0 MiB (5,242,884 bytes); the agent takes images of at most 5 MiB.' },
      { type: 'error', message: 'Image 1 cannot be sent: it is of type image/bmp; the agent takes PNG, JPEG, GIF and WebP images.' },
    ]);
  });

  it('answers pickImages with the host\'s images for the composer and a message for each file refused', async () => {
    const { posted, server, controller } = setup({ 'agent/sessions': SESSIONS });
    controller.attach(server.connection, { state: 'ready', features: [] });
    await controller.handle({ type: 'pickImages' });
    await controller.handle({ type: 'pickImages', uris: ['file:///w/shot.png'] });  // dragged from the explorer
    expect(posted.filter((m) => m.type === 'attach' || m.type === 'error')).toEqual([
      { type: 'error', message: PICKED.problems[0] },
      { type: 'attach', images: PICKED.images },
      { type: 'error', message: PICKED.problems[0] },
      { type: 'attach', images: PICKED.images },
    ]);
    expect(asked).toEqual([undefined, ['file:///w/shot.png']]);
  });

  it('lists the slash commands from agent/commands when the server has them, else null', async () => {
    const COMMANDS = [
      { name: 'compact', description: 'Compact the conversation now', source: 'builtin' },
      { name: 'review', description: 'Review a file', argumentHint: '<path>', source: 'project' },
    ];
    const { posted, server, controller } = setup({ 'agent/commands': () => ({ commands: COMMANDS }), 'agent/sessions': SESSIONS });
    controller.attach(server.connection, { state: 'ready', features: ['commands'] });
    await controller.handle({ type: 'listCommands' });
    controller.attach(server.connection, { state: 'ready', features: [] });
    await controller.handle({ type: 'listCommands' });
    expect(posted.filter((m) => m.type === 'commands')).toEqual([
      { type: 'commands', commands: COMMANDS }, { type: 'commands', commands: null }]);
    expect(server.requests.filter(([m]) => m === 'agent/commands')).toEqual([['agent/commands', {}]]);
  });

  it('lists the skills of agent/skills after the commands, but not one a command\'s name takes', async () => {
    const COMMANDS = [{ name: 'review', description: 'Review a file', argumentHint: '<path>', source: 'project' }];
    const SKILLS = [
      { name: 'deploy', description: 'Deploy to staging', source: 'project' },
      { name: 'review', description: 'A skill the command shadows', source: 'user' },
      { name: 'notes', description: 'Write release notes', source: 'user' },
    ];
    const { posted, server, controller } = setup({
      'agent/commands': () => ({ commands: COMMANDS }), 'agent/skills': () => ({ skills: SKILLS }), 'agent/sessions': SESSIONS });
    controller.attach(server.connection, { state: 'ready', features: ['commands', 'skills'] });
    await controller.handle({ type: 'listCommands' });
    controller.attach(server.connection, { state: 'ready', features: ['commands'] });  // a server without skills
    await controller.handle({ type: 'listCommands' });
    expect(posted.filter((m) => m.type === 'commands')).toEqual([
      { type: 'commands', commands: [...COMMANDS, { ...SKILLS[0], skill: true }, { ...SKILLS[2], skill: true }] },
      { type: 'commands', commands: COMMANDS }]);
    expect(server.requests.filter(([m]) => m === 'agent/skills')).toEqual([['agent/skills', {}]]);
  });

  it('opens a session with its plan from agent/history', async () => {
    const PLAN = [{ content: 'Read app.py', status: 'completed' }, { content: 'Fix greet', status: 'in_progress' }];
    const { posted, server, controller } = setup({ 'agent/history': () => ({ messages: [], plan: PLAN }), 'agent/sessions': SESSIONS });
    controller.attach(server.connection, { state: 'ready', features: [] });
    await controller.openSession('s9');
    expect(posted.filter((m) => m.type === 'history')).toEqual([{ type: 'history', sessionId: 's9', messages: [], plan: PLAN }]);
  });
});
