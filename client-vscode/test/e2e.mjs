// End to end in real VS Code: code-server 4.99.4 (VS Code 1.99.3) with the packaged .vsix installed, the real
// agent-lsp server, and the fake Messages API, driven through headless Chromium like a user would: open app.py,
// run "Agent: Open Chat", type a request in the panel, click "Allow once" on the edit, and check the buffer's
// text inside VS Code (then Undo). Saves test-results/e2e-workbench.png. Prints "N passed, M failed".
// Run: CODE_SERVER_DIR=<install dir> node test/e2e.mjs   (after `npm run package`)
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serverEnv, startFakeApi } from './lsp.mjs';
import { CHROMIUM_ARGS } from './chromium.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'test-results');
const CODE_SERVER = path.join(process.env.CODE_SERVER_DIR ?? path.join(os.homedir(), '.cache/agent-lsp-code-server'),
  'node_modules/.bin/code-server');
const SOURCE = 'def greet(name):\n    return "hi " + name\n';
const EDITED = 'def greet(name):\n    return "hello " + name\n';

const t0 = Date.now();
const log = (msg) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);

async function freePort() {
  const srv = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

async function until(what, predicate, timeoutMs = 30000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A fresh workspace, user data (settings) and extensions dir, with the .vsix installed. */
function prepare() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-lsp-e2e-'));
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, 'app.py'), SOURCE);
  fs.writeFileSync(path.join(ws, 'bad.json'), '{"a": 1,, }\n');
  fs.mkdirSync(path.join(dir, 'ud/User'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'ud/User/settings.json'), JSON.stringify({
    'workbench.startupEditor': 'none', 'workbench.tips.enabled': false, 'security.workspace.trust.enabled': false,
    'extensions.autoCheckUpdates': false, 'extensions.autoUpdate': false, 'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'workbench.enableExperiments': false, 'chat.commandCenter.enabled': false,
    'files.autoSave': 'off',  // code-server's default is afterDelay, which would save the agent's edit to disk
    'editor.autoClosingBrackets': 'never', 'editor.autoClosingQuotes': 'never',  // typing JSON into settings.json
    'agentLsp.serverCommand': ['agent-lsp', '--data-dir', path.join(dir, 'data')],
  }));
  execFileSync(CODE_SERVER, ['--extensions-dir', path.join(dir, 'ext'), '--user-data-dir', path.join(dir, 'ud'),
    '--install-extension', path.join(ROOT, 'dist/agent-lsp.vsix')], { stdio: 'pipe', env: { ...process.env, XDG_CONFIG_HOME: path.join(dir, 'xdg') } });
  return { dir, ws };
}

function startCodeServer(dir, ws, port, apiUrl) {
  const proc = spawn(CODE_SERVER, ['--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry',
    '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override',
    '--extensions-dir', path.join(dir, 'ext'), '--user-data-dir', path.join(dir, 'ud'), ws], {
    // The extension host inherits this environment, and so does the agent server it starts.
    env: { ...serverEnv(apiUrl), XDG_CONFIG_HOME: path.join(dir, 'xdg'), XDG_DATA_HOME: path.join(dir, 'xdg-data') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stdout.on('data', (d) => { output += d; });
  proc.stderr.on('data', (d) => { output += d; });
  return { proc, output: () => output };
}

/** The inner frame of our webview (VS Code nests it: workbench > iframe.webview > iframe#active-frame). */
async function chatFrame(page) {
  return until('the Agent chat webview', async () => {
    for (const frame of page.frames()) {
      if (frame.url().includes('fake.html') && await frame.$('#prompt').catch(() => null)) return frame;
    }
    return undefined;
  });
}

/** The text of the active editor as Monaco renders it (spaces come out as U+00A0). */
async function editorText(page) {
  const lines = await page.$$eval('.editor-instance .view-lines .view-line', (ns) =>
    ns.map((n) => ({ top: parseFloat(n.style.top), text: n.textContent })));
  return lines.sort((a, b) => a.top - b.top).map((l) => l.text.replace(/\u00a0/g, ' ')).join('\n');
}

async function runCommand(page, title) {
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget .quick-input-box input');
  await page.keyboard.type(title);
  await page.waitForSelector(`.quick-input-list .monaco-list-row[aria-label*="${title}"]`);
  await page.keyboard.press('Enter');
}

const results = [];
async function check(name, fn) {
  try {
    await fn();
    results.push([name, true]);
    log(`ok - ${name}`);
  } catch (e) {
    results.push([name, false]);
    log(`not ok - ${name}\n${e.stack ?? e}`);
    throw e;
  }
}

let api, cs, browser;
try {
  fs.mkdirSync(OUT, { recursive: true });
  api = await startFakeApi([
    { content: [{ type: 'text', text: "I'll change the greeting in `app.py`." },
      { type: 'tool_use', name: 'edit_file', input: { path: 'app.py', old_string: '"hi "', new_string: '"hello "' } }], delay: 0.01 },
    { content: [{ type: 'text', text: '`greet` now says **hello**.' }], delay: 0.01 },
    { content: [{ type: 'tool_use', name: 'get_diagnostics', input: { path: 'bad.json' } }] },
    { content: [{ type: 'text', text: 'bad.json has a syntax error.' }] },
    { content: [{ type: 'text', text: 'Thinking about the whole codebase' }], hang: true },
  ]);
  const { dir, ws } = prepare();
  log('vsix installed');
  const port = await freePort();
  cs = startCodeServer(dir, ws, port, api.url);
  await until('code-server to listen', () => cs.output().includes('HTTP server listening'));
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  log('workbench loaded');

  await check('app.py opens in an editor', async () => {
    await until('the explorer', () => page.$('.explorer-folders-view .monaco-list-row[aria-label*="app.py"]'), 30000);
    await page.click('.explorer-folders-view .monaco-list-row[aria-label*="app.py"]');
    await until('app.py in the editor', async () => (await editorText(page)) === SOURCE);
  });

  let frame;
  await check('"Agent: Open Chat" shows the panel, connected to the server', async () => {
    await runCommand(page, 'Agent: Open Chat');
    frame = await chatFrame(page);
    await frame.waitForSelector('.welcome');
    await until('the server to be ready', async () => await frame.isHidden('#banner') && (await frame.textContent('#status')) === '');
  });

  await check('a chat streams into the panel, and "Allow once" lets the edit into the buffer', async () => {
    await frame.fill('#prompt', 'Make greet say hello');
    await frame.press('#prompt', 'Enter');
    const allow = await frame.waitForSelector('.confirm button[data-decision="allow_once"]', { timeout: 30000 });
    assert.match(await frame.textContent('.tool.kind-edit .diff'), /-    return "hi " \+ name\n\+    return "hello " \+ name/);
    assert.equal(await editorText(page), SOURCE, 'nothing changes before the user allows it');
    await allow.click();
    await frame.waitForSelector('.result', { timeout: 30000 });
    assert.deepEqual(await frame.$$eval('#transcript > *', (ns) => ns.map((n) => n.className)),
      ['msg user', 'msg assistant', 'tool kind-edit status-completed', 'msg assistant', 'result end_turn']);
    assert.deepEqual(await frame.$$eval('.msg.assistant .markdown', (ns) => ns.map((n) => n.textContent.trim())),
      ["I'll change the greeting in app.py.", 'greet now says hello.']);
    assert.equal(await frame.textContent('.confirm.answered'), 'Allowed once');
    assert.match(await frame.textContent('.result'), /^Done · 2 turns · 1 tool call · /);
  });

  await check('the edit is in the document inside VS Code (unsaved), and the model got the tool result', async () => {
    await until('the edited text in the editor', async () => (await editorText(page)) === EDITED, 10000);
    assert.equal(fs.readFileSync(path.join(ws, 'app.py'), 'utf8'), SOURCE, 'the file on disk is untouched');
    const tab = await page.$eval('.tabs-container .tab[aria-label*="app.py"]', (n) => n.className);
    assert.match(tab, /\bdirty\b/, `the tab shows unsaved changes (${tab})`);
    const [, second] = api.requests();
    const toolResult = second.messages.at(-1).content.find((b) => b.type === 'tool_result');
    assert.match(JSON.stringify(toolResult.content), /Edited app\.py/);
  });
  await page.screenshot({ path: path.join(OUT, 'e2e-workbench.png') });

  await check('Undo in the editor takes the agent\'s edit back', async () => {
    await page.click('.editor-instance .view-lines');
    await page.keyboard.press('Control+Z');
    await until('the original text after undo', async () => (await editorText(page)) === SOURCE, 10000);
  });

  await check('the agent sees VS Code\'s own diagnostics (the JSON language server\'s), via agent/diagnostics', async () => {
    await page.keyboard.press('Control+P');  // Quick Open: the side bar shows the Agent view now
    await page.waitForSelector('.quick-input-widget .quick-input-box input');
    await page.keyboard.type('bad.json');
    await page.waitForSelector('.quick-input-list .monaco-list-row[aria-label*="bad.json"]');
    await page.keyboard.press('Enter');
    await until('the JSON error in the Problems count', async () =>
      /^1\s*0$/.test((await page.textContent('#status\\.problems'))?.trim() ?? ''), 15000);
    await frame.fill('#prompt', 'Any problems in bad.json?');
    await frame.press('#prompt', 'Enter');
    await frame.waitForSelector('.result >> nth=1', { timeout: 30000 });
    const toolResult = api.requests()[3].messages.at(-1).content.find((b) => b.type === 'tool_result');
    assert.equal(toolResult.content, 'bad.json:1:9: error: Property expected [json]');
  });

  await check('Stop ends a hanging chat (its progress shown in the status bar): "Stopped", ready again', async () => {
    await frame.fill('#prompt', 'Now refactor everything');
    await frame.press('#prompt', 'Enter');
    await frame.waitForSelector('.msg.assistant >> text=Thinking about the whole codebase', { timeout: 30000 });
    // The server's $/progress, which vscode-languageclient shows in the status bar.
    const progress = await page.waitForSelector('.statusbar-item:has-text("Agent")', { timeout: 5000 });
    assert.equal((await progress.textContent()).trim(), 'Agent: Thinking…');
    await frame.click('#stop');
    await frame.waitForSelector('.result.aborted', { timeout: 10000 });
    assert.match(await frame.textContent('.result.aborted'), /^Stopped · 1 turn · 0 tool calls/);
    assert.equal(await frame.isEnabled('#send'), true);
  });

  await check('after "New session", the session list reopens the conversation from the server\'s history', async () => {
    await frame.click('#new-session');
    await frame.waitForSelector('.welcome');
    const first = await frame.$$eval('#sessions option', (os) => os.find((o) => o.textContent.startsWith('Make greet say hello'))?.value);
    assert.ok(first, 'the conversation is listed, titled by its first message');
    await frame.selectOption('#sessions', first);
    await frame.waitForSelector('.tool.kind-edit');
    assert.deepEqual(await frame.$$eval('#transcript > *', (ns) => ns.map((n) => n.className)), [
      'msg user', 'msg assistant', 'tool kind-edit status-completed', 'msg assistant',  // the edit
      'msg user', 'tool kind-read status-completed', 'msg assistant',                  // the diagnostics
      'msg user', 'msg assistant',                                                      // the stopped chat
    ]);
    assert.match(await frame.textContent('.tool.kind-edit .diff'), /\+    return "hello " \+ name/);
  });

  await check('a missing server: a notification and the panel say what to install', async () => {
    // Through the settings.json editor, as a user would (code-server does not notice the file changing on disk).
    const settings = JSON.parse(fs.readFileSync(path.join(dir, 'ud/User/settings.json'), 'utf8'));
    await runCommand(page, 'Preferences: Open User Settings (JSON)');
    await until('settings.json in the editor', () => page.$('.tabs-container .tab.active[aria-label*="settings.json"]'));
    await page.click('.editor-instance .view-lines');
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(JSON.stringify({ ...settings, 'agentLsp.serverCommand': 'agent-lsp-not-installed' }));
    await page.keyboard.press('Control+S');
    const expected = 'The agent server "agent-lsp-not-installed" was not found. Install it with "pip install agent-lsp", '
      + 'or set agentLsp.serverCommand to the command that starts it.';
    await frame.waitForSelector('#banner:not([hidden])', { timeout: 15000 });
    assert.equal(await frame.textContent('#banner p'), expected);
    const toast = await page.waitForSelector('.notifications-toasts .notification-list-item-message', { timeout: 10000 });
    assert.equal(await toast.textContent(), expected);
    await page.screenshot({ path: path.join(OUT, 'e2e-no-server.png') });
  });

  await check('no page errors in the workbench', async () => assert.deepEqual(pageErrors, []));
} catch (e) {
  if (!results.some(([, ok]) => !ok)) { results.push(['setup', false]); console.error(e); }
  console.error(cs?.output().slice(-3000));
  await browser?.contexts()[0]?.pages()[0]?.screenshot({ path: path.join(OUT, 'e2e-failure.png') }).catch(() => {});
} finally {
  await browser?.close();
  cs?.proc.kill();
  api?.stop();
}
const passed = results.filter(([, ok]) => ok).length;
console.log(`e2e: ${passed} passed, ${results.length - passed} failed (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
process.exit(passed === results.length ? 0 : 1);
