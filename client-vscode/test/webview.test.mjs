// The chat webview in real headless Chromium (Debian's, driven by playwright-core), with a stub of the API VS
// Code injects (acquireVsCodeApi). Renders a scripted stream, clicks Allow and Stop, checks every message the
// page posts, and fails on any console error (CSP violations land there). Saves test-results/webview-*.png.
// Needs `npm run build` first (dist/webview.js). Run: node --test test/webview.test.mjs
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import esbuild from 'esbuild';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from './chromium.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'test-results');
/** A few of VS Code's Dark Modern theme variables, as VS Code sets them on a webview's <html>. */
const THEME = {
  '--vscode-font-family': 'system-ui, "Segoe UI", Ubuntu, sans-serif', '--vscode-font-size': '13px',
  '--vscode-editor-font-family': '"DejaVu Sans Mono", monospace', '--vscode-editor-font-size': '12px',
  '--vscode-foreground': '#cccccc', '--vscode-descriptionForeground': '#9d9d9d', '--vscode-sideBar-background': '#181818',
  '--vscode-editor-background': '#1f1f1f', '--vscode-button-background': '#0078d4', '--vscode-button-foreground': '#ffffff',
  '--vscode-button-hoverBackground': '#026ec1', '--vscode-button-secondaryBackground': '#313131',
  '--vscode-button-secondaryForeground': '#cccccc', '--vscode-input-background': '#313131', '--vscode-input-foreground': '#cccccc',
  '--vscode-input-border': '#3c3c3c', '--vscode-dropdown-background': '#313131', '--vscode-dropdown-foreground': '#cccccc',
  '--vscode-dropdown-border': '#3c3c3c', '--vscode-widget-border': '#313131', '--vscode-editorWidget-background': '#202020',
  '--vscode-textCodeBlock-background': '#2b2b2b', '--vscode-textLink-foreground': '#4daafc', '--vscode-badge-background': '#616161',
  '--vscode-badge-foreground': '#f8f8f8', '--vscode-errorForeground': '#f85149', '--vscode-editorWarning-foreground': '#cca700',
  '--vscode-testing-iconPassed': '#73c991', '--vscode-focusBorder': '#0078d4',
  '--vscode-diffEditor-insertedLineBackground': 'rgba(155,185,85,0.2)', '--vscode-diffEditor-removedLineBackground': 'rgba(255,0,0,0.2)',
};

let browser;
let pageUrl;
before(async () => {
  fs.mkdirSync(OUT, { recursive: true });
  // The same HTML shell the extension serves, from src/chatHtml.ts, with file: URLs in place of webview URIs.
  const { outputFiles } = await esbuild.build({ entryPoints: [path.join(ROOT, 'src/chatHtml.ts')], bundle: true, write: false, format: 'esm' });
  const { chatHtml } = await import(`data:text/javascript;base64,${Buffer.from(outputFiles[0].text).toString('base64')}`);
  const html = chatHtml({ cspSource: 'file:', nonce: 'dGVzdC1ub25jZQ==',
    script: pathToFileURL(path.join(ROOT, 'dist/webview.js')).href, style: pathToFileURL(path.join(ROOT, 'media/chat.css')).href });
  const file = path.join(OUT, 'chat.html');
  fs.writeFileSync(file, html);
  pageUrl = pathToFileURL(file).href;
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
});
after(() => browser?.close());

/** A page with the VS Code stub; `saved` is what getState returns. Collects errors and posted messages. */
async function open(saved) {
  const page = await browser.newPage({ viewport: { width: 420, height: 860 } });
  await page.addInitScript(([state, theme]) => {
    window.__posted = [];
    window.__state = state;
    window.acquireVsCodeApi = () => ({
      postMessage: (m) => window.__posted.push(m), getState: () => window.__state, setState: (s) => { window.__state = s; },
    });
    document.addEventListener('DOMContentLoaded', () => {
      for (const [k, v] of Object.entries(theme)) document.documentElement.style.setProperty(k, v);
    });
  }, [saved, THEME]);
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push(m.text()); });
  await page.goto(pageUrl);
  await page.waitForFunction(() => window.__posted.length > 0);
  const toPage = (message) => page.evaluate((m) => window.postMessage(m, '*'), message);
  const posted = () => page.evaluate(() => window.__posted);
  return { page, errors, toPage, posted };
}

const DIFF = '--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def greet(name):\n-    return "hi " + name\n+    return "hello " + name\n';
const META = { turnsCount: 2, toolCallsCount: 2, durationMs: 3400, usage: { inputTokens: 1830, outputTokens: 212 } };
const update = (u) => ({ type: 'update', update: u });

test('renders a streamed chat, posts Allow, Stop and the mode, with no console or CSP error', async () => {
  const { page, errors, toPage, posted } = await open(undefined);
  await toPage({ type: 'init', mode: 'default', server: { state: 'ready' }, busy: false });
  await toPage({ type: 'sessions', sessions: [
    { sessionId: 'old', title: 'Explain the inventory module', createdAt: '2025-01-02T10:00:00Z', updatedAt: '2025-01-02T10:05:00Z', turnsCount: 3 }] });
  await page.type('#prompt', 'Make greet say');
  await page.keyboard.press('Shift+Enter');
  await page.type('#prompt', 'hello, please');
  await page.keyboard.press('Enter');
  assert.equal(await page.inputValue('#prompt'), '');
  assert.equal(await page.isDisabled('#send'), true);
  await toPage({ type: 'busy', busy: true });
  await toPage({ type: 'session', sessionId: 's1' });
  for (const u of [
    { kind: 'turn_start', turn: 1, maxTurns: 25 },
    { kind: 'thinking_delta', text: 'The greeting is in app.py; read it, then edit the string.' },
    { kind: 'text_delta', text: 'I\'ll look at `greet` first.' },
    { kind: 'usage', inputTokens: 900, outputTokens: 80 },
    { kind: 'tool_call', toolCallId: 't1', name: 'read_file', title: 'Read app.py', toolKind: 'read', input: { path: 'app.py' } },
    { kind: 'tool_call_update', toolCallId: 't1', status: 'running' },
    { kind: 'tool_call_update', toolCallId: 't1', status: 'completed', output: '     1\tdef greet(name):\n     2\t    return "hi " + name' },
    { kind: 'turn_start', turn: 2, maxTurns: 25 },
    { kind: 'tool_call', toolCallId: 't2', name: 'edit_file', title: 'Edit app.py', toolKind: 'edit',
      input: { path: 'app.py', old_string: '"hi "', new_string: '"hello "' } },
    { kind: 'tool_call_update', toolCallId: 't2', status: 'awaiting_confirmation' },
    { kind: 'confirmation_request', toolCallId: 't2', name: 'edit_file', title: 'Edit app.py', input: {}, diff: DIFF,
      options: ['allow_once', 'allow_always', 'reject_once', 'reject_always'] },
  ]) await toPage(update(u));
  assert.equal(await page.textContent('.confirm-question'), 'Apply this edit?');
  assert.deepEqual(await page.$$eval('.confirm button', (bs) => bs.map((b) => b.textContent)), ['Allow once', 'Allow always', 'Reject']);
  await page.screenshot({ path: path.join(OUT, 'webview-confirm.png') });
  await page.click('.confirm button[data-decision="allow_once"]');
  assert.equal(await page.textContent('.confirm.answered'), 'Allowed once');
  for (const u of [
    { kind: 'tool_call_update', toolCallId: 't2', status: 'running' },
    { kind: 'tool_call_update', toolCallId: 't2', status: 'completed', output: 'Edited app.py', diff: DIFF },
    { kind: 'turn_start', turn: 3, maxTurns: 25 },
    { kind: 'text_delta', text: 'Done: `greet` now says **hello**.\n\n' },
    { kind: 'text_delta', text: '```python\ndef greet(name):\n    return "hello " + name\n```\n' },
  ]) await toPage(update(u));
  assert.equal(await page.isVisible('#stop'), true);
  await page.click('#stop');
  await page.focus('#prompt');
  await page.keyboard.press('Escape');
  await toPage({ type: 'done', result: { sessionId: 's1', stopReason: 'end_turn', finalMessage: 'Done', metadata: META } });
  await toPage({ type: 'busy', busy: false });
  await page.selectOption('#mode', 'acceptEdits');

  assert.deepEqual(await posted(), [
    { type: 'ready' },
    { type: 'send', text: 'Make greet say\nhello, please' },
    { type: 'confirm', toolCallId: 't2', decision: 'allow_once' },
    { type: 'stop' },
    { type: 'stop' },
    { type: 'setMode', mode: 'acceptEdits' },
  ]);
  assert.deepEqual(await page.$$eval('#transcript > *', (ns) => ns.map((n) => n.className)), [
    'msg user', 'msg assistant', 'tool kind-read status-completed', 'tool kind-edit status-completed', 'msg assistant', 'result end_turn',
  ]);
  assert.equal(await page.$eval('.thinking', (d) => d.open), false, 'thinking starts collapsed');
  assert.deepEqual(await page.$$eval('.msg.assistant .markdown strong, .msg.assistant .markdown pre code', (ns) => ns.map((n) => n.tagName)), ['STRONG', 'CODE']);
  assert.deepEqual(await page.$$eval('.tool.kind-edit .diff span', (ns) => ns.map((n) => n.className)), ['file', 'file', 'hunk', 'ctx', 'del', 'add']);
  assert.equal(await page.textContent('.result'), 'Done · 2 turns · 2 tool calls · 3.4 s · 2,042 tokens');
  assert.equal(await page.isVisible('#stop'), false);
  assert.equal(await page.isEnabled('#send'), true);
  assert.deepEqual(await page.$$eval('#sessions option', (os) => os.map((o) => [o.value, o.textContent.split(' — ')[0]])),
    [['s1', 'This conversation'], ['old', 'Explain the inventory module']]);  // (then the date, in the user's locale)
  assert.deepEqual(errors, []);
  await page.screenshot({ path: path.join(OUT, 'webview-chat.png') });

  // A reloaded view redraws the same transcript from its saved state and tells the extension which session it shows.
  const saved = await page.evaluate(() => window.__state);
  const again = await open(saved);
  assert.deepEqual(await again.posted(), [{ type: 'ready', sessionId: 's1', mode: 'acceptEdits' }]);
  assert.equal(await again.page.textContent('#transcript'), await page.textContent('#transcript'));
  assert.deepEqual(again.errors, []);
});

test('says what to install when the server is missing, hides sessions the server cannot list', async () => {
  const { page, errors, toPage, posted } = await open(undefined);
  const message = 'agent-lsp was not found (agent-lsp). Install it with "pipx install agent-lsp-server" or "uv tool install agent-lsp-server", or set agentLsp.serverCommand to its full path.';
  await toPage({ type: 'init', mode: 'plan', server: { state: 'missing', message }, busy: false });
  await toPage({ type: 'sessions', sessions: null });
  assert.equal(await page.textContent('#banner p'), message);
  assert.equal(await page.isVisible('#sessions'), false);
  assert.equal(await page.inputValue('#mode'), 'plan');
  await page.click('#banner button[data-command="openServerSetting"]');
  await page.click('#banner button[data-command="restart"]');
  await page.fill('#prompt', 'hello');
  await page.click('#send');  // nothing to send to: the message stays, and the panel is not "Working…"
  assert.equal(await page.inputValue('#prompt'), 'hello');
  assert.equal(await page.textContent('#status'), '');
  await page.fill('#prompt', 'x'.repeat(1_000_001));
  await page.press('#prompt', 'Enter');  // refused at once with its size, kept in the input
  assert.match(await page.textContent('.notice.error'), /^The message is 1,000,001 characters; the panel sends at most 1,000,000\./);
  assert.equal((await page.inputValue('#prompt')).length, 1_000_001);
  await page.fill('#prompt', '');
  await toPage({ type: 'error', message });
  assert.equal(await page.textContent('.notice.error >> nth=1'), message);
  await toPage({ type: 'done', result: { sessionId: 's', stopReason: 'error', finalMessage: '',
    error: { type: 'initialization_failed', message: 'No model: set ANTHROPIC_API_KEY or use --model demo.' }, metadata: { ...META, turnsCount: 0, toolCallsCount: 0 } } });
  await page.click('.result button');
  // The model's raw HTML is shown as text; nothing of it runs or loads.
  const html = 'Use <img src=x onerror="window.__xss=1"> or <script>window.__xss=2</script> **carefully**';
  await toPage(update({ kind: 'text_delta', text: html }));
  assert.equal((await page.textContent('.msg.assistant')).trim(), html.replace(/\*\*/g, ''));
  assert.equal(await page.$$eval('#transcript script, #transcript img, #transcript [onerror]', (ns) => ns.length), 0);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.deepEqual(await posted(), [
    { type: 'ready' }, { type: 'command', command: 'openServerSetting' }, { type: 'command', command: 'restart' },
    { type: 'command', command: 'setApiKey' },
  ]);
  assert.deepEqual(errors, []);
  await page.screenshot({ path: path.join(OUT, 'webview-no-server.png') });
});

test('Enter while the server starts or a chat runs queues the message (cancellable), sent when it can be; scrolling follows unless the user scrolled up', async () => {
  const { page, errors, toPage, posted } = await open(undefined);
  await toPage({ type: 'init', mode: 'default', server: { state: 'starting' }, busy: false });
  await page.fill('#prompt', 'first');
  await page.press('#prompt', 'Enter');  // the server is still starting: the message waits for it
  assert.equal(await page.textContent('#queued .queued-text'), 'first');
  assert.equal(await page.textContent('#status'), 'Starting the agent server…');
  await toPage({ type: 'server', server: { state: 'ready', features: [] } });
  assert.equal(await page.isHidden('#queued'), true);
  await toPage({ type: 'busy', busy: true });
  await page.fill('#prompt', 'second');
  await page.press('#prompt', 'Enter');
  assert.equal(await page.textContent('#queued .queued-text'), 'second');
  await page.click('#queued button');  // Cancel: the text goes back to the input
  assert.equal(await page.isHidden('#queued'), true);
  assert.equal(await page.inputValue('#prompt'), 'second');
  await page.press('#prompt', 'Enter');
  assert.equal(await page.textContent('#queued .queued-text'), 'second');
  // A long answer: the panel follows it...
  for (let i = 0; i < 60; i++) await toPage(update({ kind: 'text_delta', text: `line ${i}\n\n` }));
  const atEnd = () => page.$eval('#transcript', (t) => t.scrollHeight - t.scrollTop - t.clientHeight < 2);
  assert.equal(await atEnd(), true);
  // ...until the user scrolls up; then new text leaves the view where it is...
  await page.$eval('#transcript', (t) => { t.scrollTop = 0; t.dispatchEvent(new Event('scroll')); });
  await toPage(update({ kind: 'text_delta', text: 'more\n\n' }));
  assert.equal(await page.$eval('#transcript', (t) => t.scrollTop), 0);
  // ...but a question is always brought into view, with the focus on its first button.
  await toPage(update({ kind: 'tool_call', toolCallId: 'q', name: 'run_command', title: 'Run make', toolKind: 'execute', input: { command: 'make' } }));
  await toPage(update({ kind: 'confirmation_request', toolCallId: 'q', name: 'run_command', title: 'Run make', input: {}, command: 'make',
    options: ['allow_once', 'allow_always', 'reject_once', 'reject_always'] }));
  assert.equal(await page.evaluate(() => document.activeElement.dataset.decision), 'allow_once');
  assert.equal(await page.$eval('.confirm button', (b) => {
    const r = b.getBoundingClientRect(); const t = document.getElementById('transcript').getBoundingClientRect();
    return r.top >= t.top && r.bottom <= t.bottom;
  }), true);
  await page.keyboard.press('Escape');  // rejects the question (not the chat)
  await toPage({ type: 'done', result: { sessionId: 's', stopReason: 'end_turn', finalMessage: '', metadata: META } });
  await toPage({ type: 'busy', busy: false });  // the chat ended: the queued message goes out
  await page.waitForSelector('#queued', { state: 'hidden' });  // window.postMessage is handled in a later task
  assert.deepEqual((await posted()).slice(1), [
    { type: 'send', text: 'first' }, { type: 'confirm', toolCallId: 'q', decision: 'reject_once' }, { type: 'send', text: 'second' },
  ]);
  assert.deepEqual(await page.$$eval('.msg.user', (ns) => ns.map((n) => n.textContent)), ['first', 'second']);
  assert.deepEqual(errors, []);
});

test('"Revert this turn" on the last chat, "Revert to before this turn" on earlier ones, posting the chat index', async () => {
  const { page, errors, toPage, posted } = await open(undefined);
  await toPage({ type: 'init', mode: 'default', server: { state: 'ready', features: ['revert'] }, busy: false });
  await toPage({ type: 'session', sessionId: 's1' });
  const result = { sessionId: 's1', stopReason: 'end_turn', finalMessage: 'ok', metadata: { ...META, deniedToolCalls: 0 } };
  for (const text of ['first', 'second']) {
    await page.fill('#prompt', text);
    await page.press('#prompt', 'Enter');
    await toPage({ type: 'done', result });
    await toPage({ type: 'busy', busy: false });
  }
  await page.waitForFunction(() => document.querySelectorAll('.result button.revert').length === 2);
  assert.deepEqual(await page.$$eval('.result button.revert', (ns) => ns.map((n) => n.textContent)),
    ['Revert to before this turn', 'Revert this turn']);
  await page.click('.result button.revert >> nth=0');
  await page.click('.result button.revert >> nth=1');
  await page.waitForFunction(() => window.__posted.filter((m) => m.type === 'revert').length === 2);
  assert.deepEqual((await posted()).filter((m) => m.type === 'revert'), [{ type: 'revert', toChat: 0 }, { type: 'revert' }]);
  await toPage({ type: 'notice', level: 'warning', message: 'Reverted a.py.\nNot reverted: b.py (changed since)' });
  await page.waitForSelector('.notice.warning');
  assert.equal(await page.textContent('.notice.warning'), 'Reverted a.py.\nNot reverted: b.py (changed since)');
  assert.deepEqual(errors, []);
  await page.close();
});

test('@ opens the mention list (arrows, Enter, Escape); picks become chips that go with the next message', async () => {
  const { page, errors, toPage, posted } = await open(undefined);
  await toPage({ type: 'init', mode: 'default', server: { state: 'ready', features: [] }, busy: false });
  const sel = { start: { line: 2, character: 0 }, end: { line: 6, character: 4 } };
  const choices = [
    { kind: 'selection', uri: 'file:///w/a.py', range: sel, label: 'a.py:3-7' },
    { kind: 'diagnostics', uri: 'file:///w/a.py', label: 'a.py' },
    { kind: 'file', uri: 'file:///w/a.py', label: 'a.py' },
    { kind: 'file', uri: 'file:///w/src/b.py', label: 'src/b.py' },
  ];
  const listed = () => page.evaluate(() => window.__posted.filter((m) => m.type === 'listMentions').length);
  const items = () => page.$$eval('#mention-list li', (ns) => ns.map((n) => [n.textContent, n.getAttribute('aria-selected')]));
  const chipLabels = () => page.$$eval('#mentions .chip-label', (ns) => ns.map((n) => n.textContent));

  await page.type('#prompt', 'Look at @');
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'listMentions'));
  await toPage({ type: 'mentionChoices', choices });
  await page.waitForSelector('#mention-list li');
  assert.deepEqual(await items(), [['selectiona.py:3-7', 'true'],
    ['diagnosticsa.py', 'false'], ['filea.py', 'false'], ['filesrc/b.py', 'false']]);
  await page.screenshot({ path: path.join(OUT, 'webview-mentions.png') });
  await page.type('#prompt', 'src');  // filters; no second request while the list is open
  await page.waitForFunction(() => document.querySelectorAll('#mention-list li').length === 1);
  assert.equal(await listed(), 1);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#mentions .chip');
  assert.deepEqual(await chipLabels(), ['@src/b.py']);
  assert.equal(await page.inputValue('#prompt'), 'Look at ');
  assert.equal(await page.isHidden('#mention-list'), true);

  // A second @: arrows move the highlight, Enter picks it.
  await page.type('#prompt', '@');
  await page.waitForFunction(() => document.querySelectorAll('#mention-list li').length === 4);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowUp');
  assert.equal(await page.textContent('#mention-list li[aria-selected="true"]'), 'diagnosticsa.py');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('#mentions .chip').length === 2);
  // A third, then Escape closes the list without picking; a chip's × removes it.
  await page.type('#prompt', '@sel');
  await page.waitForFunction(() => document.querySelectorAll('#mention-list li').length === 1);
  await page.keyboard.press('Escape');
  await page.waitForSelector('#mention-list', { state: 'hidden' });
  assert.equal(await page.inputValue('#prompt'), 'Look at @sel');
  await page.fill('#prompt', 'Look at ');
  await page.type('#prompt', '@sel');
  await page.waitForFunction(() => document.querySelectorAll('#mention-list li').length === 1);
  await page.keyboard.press('Tab');
  await page.waitForFunction(() => document.querySelectorAll('#mentions .chip').length === 3);
  assert.deepEqual(await chipLabels(), ['@src/b.py', '@diagnostics a.py', '@selection a.py:3-7']);
  await page.click('#mentions .chip:nth-child(2) button.chip-remove');
  await page.waitForFunction(() => document.querySelectorAll('#mentions .chip').length === 2);

  await page.type('#prompt', 'this');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'send'));
  assert.deepEqual((await posted()).filter((m) => m.type === 'send'),
    [{ type: 'send', text: 'Look at this', mentions: [choices[3], choices[0]] }]);
  assert.equal(await page.isHidden('#mentions'), true);
  assert.equal(await page.textContent('.user'), 'Look at this\n\n@src/b.py @selection a.py:3-7');
  assert.equal(await listed(), 4);  // one request per opening of the list
  assert.deepEqual(errors, []);
  await page.close();
});

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** A PNG named `name` pasted into the prompt, as from the clipboard. */
const pastePng = (page, name) => page.evaluate(([png, file]) => {
  const data = new DataTransfer();
  data.items.add(new File([Uint8Array.from(atob(png), (c) => c.charCodeAt(0))], file, { type: 'image/png' }));
  document.getElementById('prompt').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
}, [PNG, name]);

test('the plan is a checklist pinned above the chat, updated live and redrawn from history; a subagent\'s calls nest under its task; web_fetch asks with its URL', async () => {
  const { page, errors, toPage, posted } = await open(undefined);
  await toPage({ type: 'init', mode: 'default', server: { state: 'ready', features: ['plan', 'task'] }, busy: false });
  assert.equal(await page.isHidden('#plan'), true);
  await page.fill('#prompt', 'Make greet say hello and check the docs');
  await page.press('#prompt', 'Enter');
  await toPage({ type: 'busy', busy: true });
  await toPage({ type: 'session', sessionId: 's1' });
  const plan = (entries) => update({ kind: 'plan', entries });
  const entries = () => page.$$eval('#plan .plan-entry', (ns) => ns.map((n) => [n.className.replace('plan-entry ', ''), n.textContent]));
  await toPage(plan([{ content: 'Find greet', status: 'in_progress' }, { content: 'Change the greeting', status: 'pending' },
    { content: 'Check the docs', status: 'pending' }]));
  await page.waitForSelector('#plan .plan-entry');
  assert.deepEqual(await entries(), [['in_progress', '◐Find greet'], ['pending', '○Change the greeting'], ['pending', '○Check the docs']]);
  assert.equal(await page.textContent('#plan .plan-count'), '0/3 done');
  for (const u of [
    { kind: 'tool_call', toolCallId: 'task1', name: 'task', title: 'Task: find greet', toolKind: 'read', input: { description: 'find greet', prompt: 'Where is greet defined?' } },
    { kind: 'tool_call_update', toolCallId: 'task1', status: 'running' },
    { kind: 'text_delta', text: 'Looking.', parentToolCallId: 'task1' },
    { kind: 'tool_call', toolCallId: 'c1', name: 'search', title: 'Search def greet', toolKind: 'search', input: { pattern: 'def greet' }, parentToolCallId: 'task1' },
    { kind: 'tool_call_update', toolCallId: 'c1', status: 'completed', output: 'app.py:1: def greet(name):', parentToolCallId: 'task1' },
    { kind: 'tool_call', toolCallId: 'c2', name: 'read_file', title: 'Read app.py', toolKind: 'read', input: { path: 'app.py' }, parentToolCallId: 'task1' },
  ]) await toPage(update(u));
  await page.waitForSelector('.tool[data-tool-call-id="task1"] .subagent summary');
  assert.equal(await page.textContent('.subagent > summary'), 'Subagent: 2 tool calls, 1 running');
  assert.equal(await page.$eval('.subagent', (d) => d.open), false, 'the subagent starts collapsed');
  assert.equal(await page.isVisible('.subagent .tool'), false);
  await page.click('.subagent > summary');  // opened by the user: it stays open as its calls change
  await toPage(update({ kind: 'tool_call_update', toolCallId: 'c2', status: 'completed', output: '1\tdef greet(name):', parentToolCallId: 'task1' }));
  await page.waitForFunction(() => document.querySelector('.subagent > summary').textContent === 'Subagent: 2 tool calls');
  assert.equal(await page.$eval('.subagent', (d) => d.open), true);
  assert.deepEqual(await page.$$eval('.subagent .tool', (ns) => ns.map((n) => [n.dataset.toolCallId, n.className])),
    [['c1', 'tool kind-search status-completed'], ['c2', 'tool kind-read status-completed']]);
  await toPage(update({ kind: 'tool_call_update', toolCallId: 'task1', status: 'completed', output: 'greet is in app.py, line 1.' }));
  // only the task is a card of the transcript; its subagent's calls are inside it
  assert.deepEqual(await page.$$eval('#transcript > .tool', (ns) => ns.map((n) => n.dataset.toolCallId)), ['task1']);
  await toPage(plan([{ content: 'Find greet', status: 'completed' }, { content: 'Change the greeting', status: 'completed' },
    { content: 'Check the docs', status: 'in_progress' }]));
  await page.waitForFunction(() => document.querySelector('#plan .plan-count').textContent === '2/3 done');
  assert.deepEqual(await entries(), [['completed', '✓Find greet'], ['completed', '✓Change the greeting'], ['in_progress', '◐Check the docs']]);
  // web_fetch (tool kind fetch): the question shows the URL it would read
  const url = 'https://docs.python.org/3/library/string.html';
  await toPage(update({ kind: 'tool_call', toolCallId: 'f1', name: 'web_fetch', title: 'Fetch docs.python.org', toolKind: 'fetch', input: { url, prompt: 'str.format' } }));
  await toPage(update({ kind: 'confirmation_request', toolCallId: 'f1', name: 'web_fetch', title: 'Fetch docs.python.org', input: { url },
    command: url, options: ['allow_once', 'allow_always', 'reject_once', 'reject_always'] }));
  await page.waitForSelector('.tool.kind-fetch .confirm');
  assert.equal(await page.textContent('.tool.kind-fetch .confirm-question'), 'Fetch this page?');
  assert.equal(await page.textContent('.tool.kind-fetch .fetch-url'), url);
  assert.equal(await page.$$eval('.tool.kind-fetch pre.command', (ns) => ns.length), 0, 'the URL is shown once');
  assert.equal(await page.textContent('.tool.kind-fetch .tool-icon'), '⇣');
  await page.screenshot({ path: path.join(OUT, 'webview-plan.png') });
  await page.click('.tool.kind-fetch .confirm button[data-decision="allow_once"]');
  await toPage({ type: 'done', result: { sessionId: 's1', stopReason: 'aborted', finalMessage: '', metadata: META } });
  await toPage({ type: 'busy', busy: false });
  await page.waitForSelector('.result');
  assert.deepEqual(await page.$$eval('.tool[data-tool-call-id="f1"]', (ns) => ns.map((n) => n.className)), ['tool kind-fetch status-cancelled']);

  // A reloaded view redraws the plan from its saved state; another session's history brings its own plan; New empties it.
  const again = await open(await page.evaluate(() => window.__state));
  assert.equal(await again.page.textContent('#plan .plan-count'), '2/3 done');
  await again.toPage({ type: 'history', sessionId: 's2', messages: [{ role: 'user', content: 'older' }],
    plan: [{ content: 'Only step', status: 'pending' }] });
  await again.page.waitForFunction(() => document.querySelector('#plan .plan-count')?.textContent === '0/1 done');
  await again.toPage({ type: 'reset' });
  await again.page.waitForSelector('#plan', { state: 'hidden' });
  assert.deepEqual((await posted()).filter((m) => m.type !== 'ready'), [
    { type: 'send', text: 'Make greet say hello and check the docs' }, { type: 'confirm', toolCallId: 'f1', decision: 'allow_once' }]);
  assert.deepEqual([...errors, ...again.errors], []);
  await page.close();
  await again.page.close();
});

test('images: pasted, dropped or attached show as thumbnails, are checked (type, 5 MiB) with a message naming the file, and go with the message', async () => {
  const { page, errors, toPage, posted } = await open(undefined);
  await toPage({ type: 'init', mode: 'default', server: { state: 'ready', features: ['images'] }, busy: false });
  const thumbs = (where) => page.$$eval(`${where} .thumbnail img`, (ns) => ns.map((n) => n.alt));
  // paste: an image from the clipboard
  await page.focus('#prompt');
  await pastePng(page, 'screenshot.png');
  await page.waitForSelector('#attachments .thumbnail');
  assert.deepEqual(await thumbs('#attachments'), ['screenshot.png']);
  // drop: one good image, one too large, one of a type the agent does not take
  await page.evaluate((png) => {
    const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], 'diagram.webp', { type: 'image/webp' }));
    data.items.add(new File([new Uint8Array(5 * 1024 * 1024 + 1)], 'huge.png', { type: 'image/png' }));
    data.items.add(new File([bytes], 'icon.bmp', { type: 'image/bmp' }));
    const composer = document.getElementById('composer');
    composer.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
    composer.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  }, PNG);
  await page.waitForFunction(() => document.querySelectorAll('#attachments .thumbnail').length === 2);
  assert.deepEqual(await page.$$eval('.notice.error', (ns) => ns.map((n) => n.textContent)), [
    'huge.png cannot be sent: it is 5.0 MiB (5,242,881 bytes); the agent takes images of at most 5 MiB.',
    'icon.bmp cannot be sent: it is of type image/bmp; the agent takes PNG, JPEG, GIF and WebP images.',
  ]);
  // an image dragged from VS Code's explorer comes as its URI: the extension reads it
  await page.evaluate(() => {
    const data = new DataTransfer();
    data.setData('application/vnd.code.uri-list', JSON.stringify(['file:///w/docs/flow.png']));
    const composer = document.getElementById('composer');
    composer.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
    composer.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  });
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'pickImages'));
  // the attach button asks the extension, whose answer joins the others
  await page.click('#attach');
  await toPage({ type: 'attach', images: [{ name: 'photo.jpg', bytes: 70, mimeType: 'image/jpeg', data: PNG }] });
  await page.waitForFunction(() => document.querySelectorAll('#attachments .thumbnail').length === 3);
  assert.deepEqual(await thumbs('#attachments'), ['screenshot.png', 'diagram.webp', 'photo.jpg']);
  await page.screenshot({ path: path.join(OUT, 'webview-images.png') });
  await page.click('#attachments .thumbnail:nth-child(2) .thumbnail-remove');
  await page.waitForFunction(() => document.querySelectorAll('#attachments .thumbnail').length === 2);
  await page.type('#prompt', 'Why is this red?');
  await page.press('#prompt', 'Enter');
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'send'));
  assert.deepEqual((await posted()).filter((m) => m.type !== 'ready'), [
    { type: 'pickImages', uris: ['file:///w/docs/flow.png'] },
    { type: 'pickImages' },
    { type: 'send', text: 'Why is this red?', images: [{ mimeType: 'image/png', data: PNG }, { mimeType: 'image/jpeg', data: PNG }] },
  ]);
  assert.equal(await page.isHidden('#attachments'), true);
  assert.equal(await page.$$eval('.msg.user .thumbnail img', (ns) => ns.length), 2);
  assert.equal(await page.$eval('.msg.user .thumbnail img', (n) => n.naturalWidth), 1, 'the thumbnail shows the image');
  // small images are kept in the saved state (a reloaded view shows them); the composer's are gone
  assert.deepEqual(await page.evaluate(() => [window.__state.items.find((i) => i.kind === 'user').images.length, window.__state.images.length]), [2, 0]);
  // a panel redrawn from agent/history shows a user message's images as when they were sent
  await toPage({ type: 'history', sessionId: 's9', messages: [
    { role: 'user', content: 'And this one?', images: [{ mimeType: 'image/png', data: PNG }, { mimeType: 'image/gif', data: PNG }] },
    { role: 'assistant', content: 'A rash.' }, { role: 'user', content: 'plain' }] });
  await page.waitForFunction(() => document.querySelector('.msg.user')?.textContent.startsWith('And this one?'));
  assert.deepEqual(await page.$$eval('.msg.user', (ns) => ns.map((n) => n.querySelectorAll('.thumbnail img').length)), [2, 0]);
  assert.equal(await page.$eval('.msg.user .thumbnail img', (n) => n.naturalWidth), 1, 'the redrawn thumbnail shows the image');
  assert.deepEqual(errors, []);
  await page.close();
});

test('images alone are a message: Enter with an empty prompt sends them', async () => {
  const { page, errors, toPage, posted } = await open(undefined);
  await toPage({ type: 'init', mode: 'default', server: { state: 'ready', features: ['images'] }, busy: false });
  await page.focus('#prompt');
  await page.press('#prompt', 'Enter');  // nothing to send: nothing sent, nothing said
  await pastePng(page, 'screenshot.png');
  await page.waitForSelector('#attachments .thumbnail');
  await page.press('#prompt', 'Enter');
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'send'));
  assert.deepEqual((await posted()).filter((m) => m.type !== 'ready'), [
    { type: 'send', text: '', images: [{ mimeType: 'image/png', data: PNG }] },
  ]);
  assert.equal(await page.$$eval('.msg.user .thumbnail img', (ns) => ns.length), 1);
  assert.equal(await page.$$eval('.notice.error', (ns) => ns.length), 0);
  assert.deepEqual(errors, []);
  await page.close();
});

test('/ at the start of the input completes commands from agent/commands (name, argument hint, description)', async () => {
  const { page, errors, toPage, posted } = await open(undefined);
  await toPage({ type: 'init', mode: 'default', server: { state: 'ready', features: ['commands'] }, busy: false });
  const commands = [
    { name: 'compact', description: 'Compact the conversation now', source: 'builtin' },
    { name: 'memory', description: 'Show what the agent remembers', source: 'builtin' },
    { name: 'review', description: 'Review a file for bugs', argumentHint: '<path>', source: 'project' },
  ];
  const items = () => page.$$eval('#command-list li', (ns) => ns.map((n) => [[...n.children].map((c) => c.textContent), n.getAttribute('aria-selected')]));
  await page.type('#prompt', 'not /here');  // only at the start of the message
  assert.equal((await posted()).some((m) => m.type === 'listCommands'), false);
  await page.fill('#prompt', '');
  await page.type('#prompt', '/');
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'listCommands'));
  await toPage({ type: 'commands', commands });
  await page.waitForSelector('#command-list li');
  assert.deepEqual(await items(), [
    [['/compact', 'Compact the conversation now'], 'true'],
    [['/memory', 'Show what the agent remembers'], 'false'],
    [['/review', '<path>', 'Review a file for bugs'], 'false'],
  ]);
  await page.screenshot({ path: path.join(OUT, 'webview-commands.png') });
  await page.type('#prompt', 'r');  // names that start with it first, then names that contain it
  await page.waitForFunction(() => document.querySelectorAll('#command-list li').length === 2);
  assert.deepEqual((await items()).map(([texts]) => texts[0]), ['/review', '/memory']);
  await page.type('#prompt', 'ev');
  await page.waitForFunction(() => document.querySelectorAll('#command-list li').length === 1);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#command-list', { state: 'hidden' });
  assert.equal(await page.inputValue('#prompt'), '/review ');
  await page.type('#prompt', 'app.py');
  // Escape closes the list without picking (and does not stop anything); arrows then Tab pick
  await page.fill('#prompt', '');
  await page.type('#prompt', '/me');
  await page.waitForFunction(() => document.querySelectorAll('#command-list li').length === 1);
  await page.keyboard.press('Escape');
  await page.waitForSelector('#command-list', { state: 'hidden' });
  assert.equal(await page.inputValue('#prompt'), '/me');
  await page.fill('#prompt', '');
  await page.type('#prompt', '/');
  await page.waitForFunction(() => document.querySelectorAll('#command-list li').length === 3);
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('Tab');
  assert.equal(await page.inputValue('#prompt'), '/review ');
  await page.type('#prompt', 'app.py');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'send'));
  assert.deepEqual((await posted()).filter((m) => m.type === 'send'), [{ type: 'send', text: '/review app.py' }]);
  // a server without commands: no list opens
  await toPage({ type: 'busy', busy: false });
  await toPage({ type: 'commands', commands: null });
  await page.type('#prompt', '/');
  assert.equal(await page.isHidden('#command-list'), true);
  assert.deepEqual(errors, []);
  await page.close();
});

test('/ lists the skills beside the commands, marked as skills, and a pick puts /name in the input', async () => {
  const { page, errors, toPage, posted } = await open(undefined);
  await toPage({ type: 'init', mode: 'default', server: { state: 'ready', features: ['commands', 'skills'] }, busy: false });
  await page.type('#prompt', '/');
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'listCommands'));
  await toPage({ type: 'commands', commands: [
    { name: 'compact', description: 'Compact the conversation now', source: 'builtin' },
    { name: 'deploy', description: 'Deploy the service to staging', source: 'project', skill: true },
  ] });
  await page.waitForFunction(() => document.querySelectorAll('#command-list li').length === 2);
  const items = await page.$$eval('#command-list li', (ns) => ns.map((n) => [[...n.children].map((c) => c.textContent), n.title]));
  assert.deepEqual(items, [
    [['/compact', 'Compact the conversation now'], 'Compact the conversation now (builtin)'],
    [['/deploy', 'skill', 'Deploy the service to staging'], 'Deploy the service to staging (project skill)'],
  ]);
  await page.type('#prompt', 'dep');
  await page.waitForFunction(() => document.querySelectorAll('#command-list li').length === 1);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#command-list', { state: 'hidden' });
  await page.type('#prompt', 'now');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'send'));
  assert.deepEqual((await posted()).filter((m) => m.type === 'send'), [{ type: 'send', text: '/deploy now' }]);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a server without images: no attach button, and a pasted image is refused saying why', async () => {
  const { page, errors, toPage, posted } = await open(undefined);
  await toPage({ type: 'init', mode: 'default', server: { state: 'ready', features: [] }, busy: false });
  assert.equal(await page.isHidden('#attach'), true);
  await pastePng(page, 'shot.png');
  await page.waitForSelector('.notice.error');
  assert.equal(await page.textContent('.notice.error'),
    'The agent server does not take images (they came with protocol 1.2): update agent-lsp to send them.');
  assert.equal(await page.isHidden('#attachments'), true);
  await toPage({ type: 'server', server: { state: 'ready', features: ['images'] } });
  assert.equal(await page.isVisible('#attach'), true);
  assert.deepEqual((await posted()).filter((m) => m.type !== 'ready'), []);
  assert.deepEqual(errors, []);
  await page.close();
});
