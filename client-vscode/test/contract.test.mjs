// Contract test: the real agent-lsp server (and its real anthropic SDK, pointed at the scripted fake Messages
// API) against what the extension relies on — the update stream, abort, confirmations with applyEdit, the
// agent/diagnostics answer, the session list. Run: node --test test/contract.test.mjs
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { shape, startFakeApi, startServer, until } from './lsp.mjs';

const SOURCE = 'def greet(name):\n    return "hi " + name\n';
/** A workspace with a.py, a fake API playing `script`, and a server; all stopped when test `t` ends. */
async function setup(t, script, handlers, agent) {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-lsp-ws-'));
  fs.writeFileSync(path.join(workspace, 'a.py'), SOURCE);
  const api = await startFakeApi(script);
  const server = await startServer(api.url, { workspace, handlers, agent });
  t.after(async () => {
    assert.equal(await server.stop(), 0, 'server exits 0 after shutdown/exit');
    api.stop();
  });
  return { api, server, uri: `file://${workspace}/a.py` };
}

function text(t, extra = {}) { return { content: [{ type: 'text', text: t }], ...extra }; }

// Each test has its own server and fake API, so they run side by side (the server's first chat takes ~1.5 s).
describe('agent-lsp contract', { concurrency: 3 }, () => {
  test('a streamed chat: every update in order, seq without gaps, text deltas make finalMessage', async (t) => {
    const { server, api } = await setup(t, [
      { content: [{ type: 'thinking', thinking: 'Look at a.py.' }, { type: 'text', text: 'Let me read it.' },
        { type: 'tool_use', name: 'read_file', input: { path: 'a.py' } }], delay: 0.01 },
      text('It defines `greet`, which says hi.', { delay: 0.01 }),
    ]);
    const result = await server.conn.sendRequest('agent/chat', { message: 'What is in a.py?', permissionMode: 'default' });
    assert.equal(result.stopReason, 'end_turn');
    assert.equal(result.finalMessage, 'It defines `greet`, which says hi.');
    assert.deepEqual([result.metadata.turnsCount, result.metadata.toolCallsCount], [2, 1]);
    assert.deepEqual(shape(server.updates), [
      'turn_start', 'thinking_delta', 'text_delta', 'usage', 'tool_call', 'tool_call_update:running',
      'tool_call_update:completed', 'turn_start', 'text_delta', 'usage',
    ]);
    assert.ok(server.updates.every((u) => u.sessionId === result.sessionId));
    assert.deepEqual(server.updates.map((u) => u.seq), server.updates.map((_, i) => i + 1));
    const turn2 = server.updates.slice(server.updates.findLastIndex((u) => u.update.kind === 'turn_start'));
    assert.equal(turn2.filter((u) => u.update.kind === 'text_delta').map((u) => u.update.text).join(''), result.finalMessage);
    // By kind, not by position: the number of text deltas depends on timing (the server coalesces them).
    const call = server.updates.find((u) => u.update.kind === 'tool_call').update;
    assert.deepEqual([call.name, call.title, call.toolKind, call.input], ['read_file', 'Read a.py', 'read', { path: 'a.py' }]);
    const done = server.updates.find((u) => u.update.kind === 'tool_call_update' && u.update.status === 'completed').update;
    assert.equal(done.toolCallId, call.toolCallId);
    assert.match(done.output, /def greet\(name\)/);
    assert.equal(api.requests().length, 2);
  });

  test('agent/abort of a hanging stream answers stopReason "aborted", and nothing streams after', async (t) => {
    const { server } = await setup(t, [text('Working on it', { hang: true })]);
    const chat = server.conn.sendRequest('agent/chat', { message: 'long job' });
    await until(() => server.updates.some((u) => u.update.kind === 'text_delta'), 'the first text delta');
    const sessionId = server.updates[0].sessionId;
    assert.deepEqual(await server.conn.sendRequest('agent/abort', { sessionId }), { aborted: true });
    const result = await chat;
    assert.deepEqual([result.stopReason, result.finalMessage], ['aborted', 'Working on it']);
    const count = server.updates.length;
    // A later round trip on the same ordered stream: an update sent after the answer would arrive before it.
    assert.deepEqual(await server.conn.sendRequest('agent/abort', { sessionId }), { aborted: false });
    assert.equal(server.updates.length, count, 'nothing streams after the answer');
    assert.deepEqual(shape(server.updates), ['turn_start', 'text_delta']);
  });

  test('an edit asks first; Allow once lets it through workspace/applyEdit into the open buffer', async (t) => {
    const applied = [];
    const { server, uri } = await setup(t, [
      { content: [{ type: 'tool_use', name: 'edit_file', input: { path: 'a.py', old_string: '"hi "', new_string: '"hello "' } }] },
      text('Changed the greeting.'),
    ], { 'workspace/applyEdit': (p) => { applied.push(p); return { applied: true }; } });
    await server.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 3, text: SOURCE } });
    const chat = server.conn.sendRequest('agent/chat', { message: 'say hello', permissionMode: 'default' });
    await until(() => server.updates.some((u) => u.update.kind === 'confirmation_request'), 'the confirmation request');
    const ask = server.updates.find((u) => u.update.kind === 'confirmation_request');
    assert.deepEqual(ask.update.options, ['allow_once', 'allow_always', 'reject_once', 'reject_always']);
    assert.match(ask.update.diff, /^-    return "hi " \+ name$/m);
    assert.deepEqual(await server.conn.sendRequest('agent/confirmTool',
      { sessionId: ask.sessionId, toolCallId: ask.update.toolCallId, decision: 'allow_once' }), { accepted: true });
    const result = await chat;
    assert.equal(result.stopReason, 'end_turn');
    assert.deepEqual(shape(server.updates), [
      'turn_start', 'usage', 'tool_call', 'tool_call_update:awaiting_confirmation', 'confirmation_request',
      'tool_call_update:running', 'tool_call_update:completed', 'turn_start', 'text_delta', 'usage',
    ]);
    assert.equal(applied.length, 1);
    const [change] = applied[0].edit.documentChanges;
    assert.deepEqual(change.textDocument, { uri, version: 3 });
    assert.deepEqual(change.edits.map((e) => e.newText), ['"hello "']);
    await assert.rejects(server.conn.sendRequest('agent/confirmTool',
      { sessionId: ask.sessionId, toolCallId: ask.update.toolCallId, decision: 'allow_once' }), { code: -32602 });
  });

  test('a symbol edit asks as edit_file does: the same diff, then workspace/applyEdit; its index line is unknown', async (t) => {
    // The extension answers agent/languageFeature from VS Code's providers; here the outline of a.py. VS Code
    // sends no agent/languageStatus (docs/vscode.md), so the editor's route says its index is unknown.
    const applied = [];
    const span = SOURCE.trimEnd();
    const token = crypto.createHash('sha256').update(span).digest('hex').slice(0, 12);
    const range = { start: { line: 0, character: 0 }, end: { line: 1, character: 23 } };
    const { server, uri } = await setup(t, [
      { content: [{ type: 'tool_use', name: 'replace_symbol', input: { path: 'a.py', symbol: 'greet', token,
        body: 'def greet(name):\n    return "hello " + name\n' } }] },
      text('Changed the greeting.'),
    ], {
      'workspace/applyEdit': (p) => { applied.push(p); return { applied: true }; },
      'agent/languageFeature': ({ method }) => method === 'textDocument/documentSymbol'
        ? [{ name: 'greet', kind: 12, range, selectionRange: { start: { line: 0, character: 4 }, end: { line: 0, character: 9 } } }]
        : null,
    }, { languageFeatures: ['textDocument/documentSymbol'] });
    await server.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 3, text: SOURCE } });
    const chat = server.conn.sendRequest('agent/chat', { message: 'say hello', permissionMode: 'default' });
    await until(() => server.updates.some((u) => u.update.kind === 'confirmation_request'), 'the confirmation request');
    const ask = server.updates.find((u) => u.update.kind === 'confirmation_request');
    assert.deepEqual([ask.update.name, ask.update.options], ['replace_symbol', ['allow_once', 'allow_always', 'reject_once', 'reject_always']]);
    assert.equal(ask.update.diff, '--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def greet(name):\n-    return "hi " + name\n'
      + '+    return "hello " + name\n');
    await server.conn.sendRequest('agent/confirmTool', { sessionId: ask.sessionId, toolCallId: ask.update.toolCallId, decision: 'allow_once' });
    assert.equal((await chat).stopReason, 'end_turn');
    assert.deepEqual(shape(server.updates), [
      'turn_start', 'usage', 'tool_call', 'tool_call_update:awaiting_confirmation', 'confirmation_request',
      'tool_call_update:running', 'tool_call_update:completed', 'turn_start', 'text_delta', 'usage',
    ]);
    const done = server.updates.find((u) => u.update.kind === 'tool_call_update' && u.update.status === 'completed').update;
    assert.equal(done.diff, ask.update.diff);
    assert.equal(done.output.split('\n').at(-1), 'index: unknown — the editor does not say whether its language servers finished indexing');
    const [change] = applied[0].edit.documentChanges;
    assert.deepEqual(change.textDocument, { uri, version: 3 });
  });

  test('Reject passes the refusal to the model, and the call ends "rejected"', async (t) => {
    const { server, api } = await setup(t, [
      { content: [{ type: 'tool_use', name: 'run_command', input: { command: 'rm -rf build' } }] },
      text('OK, I will not.'),
    ]);
    const chat = server.conn.sendRequest('agent/chat', { message: 'clean up' });
    await until(() => server.updates.some((u) => u.update.kind === 'confirmation_request'), 'the confirmation request');
    const ask = server.updates.find((u) => u.update.kind === 'confirmation_request');
    assert.equal(ask.update.command, 'rm -rf build');
    await server.conn.sendRequest('agent/confirmTool',
      { sessionId: ask.sessionId, toolCallId: ask.update.toolCallId, decision: 'reject_once', message: 'not now' });
    assert.equal((await chat).stopReason, 'end_turn');
    assert.deepEqual(shape(server.updates), [
      'turn_start', 'usage', 'tool_call', 'tool_call_update:awaiting_confirmation', 'confirmation_request',
      'tool_call_update:rejected', 'turn_start', 'text_delta', 'usage',
    ]);
    const toolResult = api.requests()[1].messages.at(-1).content.find((b) => b.type === 'tool_result');
    assert.match(JSON.stringify(toolResult.content), /declined.*not now/);
  });

  test('the server asks the editor for diagnostics with agent/diagnostics, in LSP shapes', async (t) => {
    const asked = [];
    const { server, api, uri } = await setup(t, [
      { content: [{ type: 'tool_use', name: 'get_diagnostics', input: { path: 'a.py' } }] },
      text('One error.'),
    ], {
      'agent/diagnostics': (p) => {
        asked.push(p);
        return { items: [{ uri, diagnostics: [{ range: { start: { line: 1, character: 4 }, end: { line: 1, character: 10 } },
          severity: 1, message: 'boom', source: 'pyright', code: 'E1' }] }] };
      },
    });
    await server.conn.sendRequest('agent/chat', { message: 'any errors?' });
    assert.equal(asked.length, 1);
    const toolResult = api.requests()[1].messages.at(-1).content.find((b) => b.type === 'tool_result');
    assert.match(JSON.stringify(toolResult.content), /a\.py:2:5: error: boom/);
  });

  test('context.mentions as the panel sends them: the file, the selection and the diagnostics reach the model', async (t) => {
    const { server, api, uri } = await setup(t, [text('Seen.')], {
      'agent/diagnostics': () => ({ items: [{ uri, diagnostics: [{ range: { start: { line: 1, character: 4 }, end: { line: 1, character: 10 } },
        severity: 1, message: 'boom', source: 'pyright' }] }] }),
    });
    const range = { start: { line: 1, character: 4 }, end: { line: 1, character: 27 } };
    await server.conn.sendRequest('agent/chat', { message: 'look', context: { activeUri: uri, mentions: [
      { kind: 'file', uri }, { kind: 'selection', uri, range }, { kind: 'diagnostics', uri }] } });
    const sent = JSON.stringify(api.requests()[0].messages.at(-1).content);
    for (const part of ['<mentions>', '@file a.py:', 'def greet(name):', '@selection of a.py, lines 2-2:', '@diagnostics of a.py:', 'boom']) {
      assert.ok(sent.includes(part), `${part} in ${sent}`);
    }
  });

  test('identity as the extension checks it; agent/sessions lists the chat, agent/history redraws it', async (t) => {
    const { server } = await setup(t, [text('Hello!')]);
    const { serverInfo, capabilities } = server.init;
    assert.equal(serverInfo.name, 'agent-lsp-server');
    assert.ok(capabilities.experimental.agent.protocolVersion >= 1);
    assert.ok(Array.isArray(capabilities.experimental.agent.features ?? []));
    const { sessionId } = await server.conn.sendRequest('agent/chat', { message: 'hi there' });
    const { sessions } = await server.conn.sendRequest('agent/sessions', {});
    assert.deepEqual(sessions.map((s) => [s.sessionId, s.title, s.turnsCount]), [[sessionId, 'hi there', 1]]);
    const { messages } = await server.conn.sendRequest('agent/history', { sessionId });
    assert.deepEqual(messages.map((m) => [m.role, m.content]), [['user', 'hi there'], ['assistant', 'Hello!']]);
  });

  test('permission modes as the panel sends them: acceptEdits edits without asking, plan offers no edit tools', async (t) => {
    const { server, api, uri } = await setup(t, [
      { content: [{ type: 'tool_use', name: 'edit_file', input: { path: 'a.py', old_string: '"hi "', new_string: '"hey "' } }] },
      text('Edited.'),
      text('Here is the plan.'),
    ], { 'workspace/applyEdit': () => ({ applied: true }) });
    await server.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: SOURCE } });
    const edited = await server.conn.sendRequest('agent/chat', { message: 'edit', permissionMode: 'acceptEdits' });
    assert.equal(edited.stopReason, 'end_turn');
    assert.ok(!shape(server.updates).includes('confirmation_request'));
    assert.ok(shape(server.updates).includes('tool_call_update:completed'));
    await server.conn.sendRequest('agent/chat', { sessionId: edited.sessionId, message: 'plan it', permissionMode: 'plan' });
    const tools = (i) => api.requests()[i].tools.map((tool) => tool.name).sort();
    assert.ok(tools(0).includes('edit_file'));
    // protocol 1.2: the plan (todo_write) and read-only subagents (task) stay; web_fetch is refused in plan mode
    assert.deepEqual(tools(2), ['get_diagnostics', 'list_files', 'list_open_buffers', 'read_file', 'search', 'task', 'todo_write']);
    await assert.rejects(server.conn.sendRequest('agent/chat', { message: 'x', permissionMode: 'yolo' }), { code: -32602 });
  });
});
