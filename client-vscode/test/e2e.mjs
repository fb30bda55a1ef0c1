// End to end in real VS Code: code-server 4.99.4 (VS Code 1.99.3) with the packaged .vsix installed, the real
// agent-lsp server (its absolute path in agentLsp.serverCommand: code-server's login shell drops a venv from
// PATH) and the fake Messages API, driven through headless Chromium like a user would. Every case runs, even
// after a failure, and the last line is "e2e: N passed, M failed". Waits are for conditions (a DOM element, a
// text, a file), never for a time. Saves test-results/*.png, and the panel in three themes to docs/img/.
// Run: CODE_SERVER_DIR=<install dir> [AGENT_LSP=<path>] node test/e2e.mjs   (after `npm run package`);
// E2E_ONLY=<regex> runs only the cases whose names match it (the others are counted as skipped).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { AGENT_LSP, serverEnv, startFakeApi, startServer } from './lsp.mjs';
import { CHROMIUM_ARGS } from './chromium.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'test-results');
const DOCS_IMG = path.join(ROOT, '../docs/img');
const CODE_SERVER = path.join(process.env.CODE_SERVER_DIR ?? path.join(os.homedir(), '.cache/agent-lsp-code-server'),
  'node_modules/.bin/code-server');
const SOURCE = 'def greet(name):\n    return "hi " + name\n';
const EDITED = 'def greet(name):\n    return "hello " + name\n';
// A small TypeScript project for VS Code's built-in TypeScript features (the language intelligence cases). main.ts
// line 3 is a type error on purpose: its squiggle says the TypeScript server has loaded the project. Line 6 has
// an emoji (two UTF-16 units) before `greet`, so its column differs between UTF-16 and characters.
const GREET_TS = [
  'export function greet(name: string): string {',
  "  return 'hi ' + name;",
  '}',
  '',
  'export class Greeter implements Speaker {',
  '  hello(): string {',
  "    return greet('class');",
  '  }',
  '}',
  '',
  'export interface Speaker {',
  '  hello(): string;',
  '}',
  '',
].join('\n');
const MAIN_TS = [
  "import { greet, Greeter, type Speaker } from './greet';",
  '',
  "const wrong: number = greet('ann');",
  'const speaker: Speaker = new Greeter();',
  "console.log(greet('bob'), wrong, speaker.hello());",
  "const emoji = '\u{1F600}'; greet(emoji);",
  '',
].join('\n');
// Suggestions as you type: the demo model completes the cursor's line as another line of an open buffer goes on.
const WALK_PY = 'import os\n\ntotal = sum(len(files) for _, _, files in os.walk("."))\nfor root, dirs, files in os.walk("."):\n'
  + '    print(root, len(files))\n\nprint("done", total)\n';
// Next-edit suggestions: the demo model carries a rename on to the next line of the window that still has the old
// name. No line here starts like another (the demo's ghost text stays out of it).
const TALLY_PY = 'count = 0\nfor item in range(3):\n    count += item\nprint(count)\n';
/** A generous ceiling for a wait on a loaded machine; each wait ends as soon as its condition holds. */
const LONG = 60_000;

const t0 = Date.now();
const log = (msg) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);

/** The absolute path of the agent-lsp under test (from AGENT_LSP, else this process's PATH). */
function agentLspPath() {
  if (path.isAbsolute(AGENT_LSP)) return AGENT_LSP;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const file = path.join(dir, AGENT_LSP);
    try { fs.accessSync(file, fs.constants.X_OK); return file; } catch { /* next */ }
  }
  throw new Error(`${AGENT_LSP} is not on PATH`);
}

async function freePort() {
  const srv = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

async function until(what, predicate, timeoutMs = LONG) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const LONG_REPLY = [
  'Here is what `greet` does, with an example.', '',
  '```python', 'def greet(name):', '    return "hi " + name', '```', '',
  '| call | returns |', '|---|---|', '| `greet("ann")` | `"hi ann"` |', '| `greet("")` | `"hi "` |', '',
  ...Array.from({ length: 30 }, (_, i) => `${i + 1}. Step ${i + 1} of a long explanation that fills the panel.`),
].join('\n');
const CODE = 'def greet(name):\n    return "hi " + name';
/** A 1×1 green PNG (the image pasted into the panel). */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const PLAN_1 = [{ content: 'Find greet', status: 'in_progress', activeForm: 'Finding greet' },
  { content: 'Explain what it returns', status: 'pending', activeForm: 'Explaining' }];
const PLAN_2 = PLAN_1.map((e) => ({ ...e, status: 'completed' }));
/** The model's replies for the workflow case (protocol 1.2): a plan, a subagent (its own two model calls), the
 * plan done, the answer; then the reply to a message with an image. Right after the first chat of `other`. */
const WORKFLOW = [
  { content: [{ type: 'text', text: "I'll plan this, and ask a subagent where greet is." },
    { type: 'tool_use', name: 'todo_write', input: { todos: PLAN_1 } },
    { type: 'tool_use', name: 'task', input: { description: 'find greet', prompt: 'Where is greet defined? Answer with the file and line.' } }] },
  { content: [{ type: 'tool_use', name: 'search', input: { pattern: 'def greet' } }] },  // the subagent
  { content: [{ type: 'text', text: 'greet is defined in app.py, line 1.' }] },          // the subagent's answer
  { content: [{ type: 'tool_use', name: 'todo_write', input: { todos: PLAN_2 } }] },
  { content: [{ type: 'text', text: '`greet` is in app.py; it returns `"hi " + name`.' }] },
  { content: [{ type: 'text', text: 'A small green square.' }] },                        // the message with an image
  { content: [{ type: 'tool_use', name: 'web_fetch', input: { url: 'https://docs.example.com/greet?lang=en', prompt: 'greet' } }] },
  { content: [{ type: 'text', text: 'I will not read that page, then.' }] },
];

/** A fresh workspace, user data (settings) and extensions dir, with the .vsix installed. */
function prepare(agentLsp) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-lsp-e2e-'));
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, 'app.py'), SOURCE);
  fs.writeFileSync(path.join(ws, 'bad.json'), '{"a": 1,, }\n');
  fs.writeFileSync(path.join(ws, 'walk.py'), WALK_PY);
  fs.writeFileSync(path.join(ws, 'tally.py'), TALLY_PY);
  fs.writeFileSync(path.join(ws, 'shot.png'), Buffer.from(PNG, 'base64'));  // for Agent: Attach Image… in the explorer
  fs.mkdirSync(path.join(ws, 'src'));
  fs.writeFileSync(path.join(ws, 'src/greet.ts'), GREET_TS);
  fs.writeFileSync(path.join(ws, 'src/main.ts'), MAIN_TS);
  fs.writeFileSync(path.join(ws, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, target: 'es2020', module: 'commonjs' }, include: ['src'] }));
  fs.mkdirSync(path.join(dir, 'other'));
  fs.mkdirSync(path.join(dir, 'ud/User'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'ud/User/settings.json'), JSON.stringify({
    'workbench.startupEditor': 'none', 'workbench.tips.enabled': false, 'security.workspace.trust.enabled': false,
    'extensions.autoCheckUpdates': false, 'extensions.autoUpdate': false, 'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'workbench.enableExperiments': false, 'chat.commandCenter.enabled': false,
    'files.autoSave': 'off',  // code-server's default is afterDelay, which would save the agent's edit to disk
    'editor.autoClosingBrackets': 'never', 'editor.autoClosingQuotes': 'never',  // typing JSON into settings.json
    // No word list while typing: when it is open, Tab takes its item before the ghost text (VS Code's rule).
    'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' },
    'agentLsp.serverCommand': agentLsp,
    'agentLsp.serverArgs': ['--data-dir', path.join(dir, 'data'), '--log-level', 'INFO'],  // logs on stderr
    'agentLsp.completions.model': 'demo',  // suggestions from the open buffers (never from the fake API's script)
  }));
  execFileSync(CODE_SERVER, ['--extensions-dir', path.join(dir, 'ext'), '--user-data-dir', path.join(dir, 'ud'),
    '--install-extension', path.join(ROOT, 'dist/agent-lsp.vsix')], { stdio: 'pipe', env: { ...process.env, XDG_CONFIG_HOME: path.join(dir, 'xdg') } });
  return { dir, ws };
}

function startCodeServer(dir, ws, port, apiUrl) {
  // The PATH of code-server's terminal and extension host is not the test's (as with a login shell that drops
  // the venv): agent-lsp is found only through the absolute path in the settings.
  const env = { ...serverEnv(apiUrl), PATH: '/usr/local/bin:/usr/bin:/bin' };
  const proc = spawn(process.execPath, [fs.realpathSync(path.join(path.dirname(CODE_SERVER), 'code-server')),
    '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry',
    '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override',
    '--extensions-dir', path.join(dir, 'ext'), '--user-data-dir', path.join(dir, 'ud'), ws], {
    env: { ...env, XDG_CONFIG_HOME: path.join(dir, 'xdg'), XDG_DATA_HOME: path.join(dir, 'xdg-data') },
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

/** Picks `label` in the open quick input (the command palette, the theme picker…) by typing it. */
async function pick(page, label) {
  await page.waitForSelector('.quick-input-widget .quick-input-box input', { timeout: LONG });
  await page.keyboard.type(label);
  // Clicked, not Enter: Enter takes the focused row, which may still be the first one while the list filters.
  await page.click(`.quick-input-list .monaco-list-row[aria-label*="${label}"]`, { timeout: LONG });
}

/** Opens a workspace file by name through Quick Open (Ctrl+P), as the active editor. */
async function quickOpen(page, name) {
  await page.click('.editor-group-container');
  await page.keyboard.press('Control+P');
  await page.waitForSelector('.quick-input-widget .quick-input-box input');
  await page.keyboard.type(name);
  await page.waitForSelector(`.quick-input-list .monaco-list-row[aria-label*="${name}"]`);
  await page.keyboard.press('Enter');
  await until(`${name} in the editor`, () => page.$(`.tabs-container .tab.active[aria-label*="${name}"]`));
}

async function runCommand(page, title) {
  await page.click('.editor-group-container');  // the workbench, not the webview, gets F1
  await page.keyboard.press('F1');
  await pick(page, title);
}

async function colorTheme(page, theme, cls) {
  await runCommand(page, 'Preferences: Color Theme');
  await pick(page, theme);
  await until(theme, () => page.$(`.monaco-workbench.${cls}`));
}

/** Whether `selector`'s element lies inside the transcript's visible area. */
function inView(frame, selector) {
  return frame.$eval(selector, (node) => {
    const r = node.getBoundingClientRect();
    const t = document.getElementById('transcript').getBoundingClientRect();
    return r.top >= t.top - 1 && r.bottom <= t.bottom + 1;
  });
}

const results = [];
const skipped = [];
/** A case the server under test cannot support yet: said, and counted as neither passed nor failed. */
function skip(name) {
  skipped.push(name);
  log(`skip - ${name} (the server does not offer it)`);
}
const ONLY = process.env.E2E_ONLY ? new RegExp(process.env.E2E_ONLY) : undefined;
/** Runs one case; a failure is recorded and the run goes on, so every failure is reported. */
async function check(name, fn) {
  if (ONLY && !ONLY.test(name)) {
    skipped.push(name);
    return;
  }
  try {
    await fn();
    results.push([name, true]);
    log(`ok - ${name}`);
  } catch (e) {
    results.push([name, false]);
    log(`not ok - ${name}\n${e.stack ?? e}`);
    await page?.screenshot({ path: path.join(OUT, `e2e-failure-${results.length}.png`) }).catch(() => {});
  }
}

let api, cs, browser, page;
try {
  fs.mkdirSync(OUT, { recursive: true });
  fs.mkdirSync(DOCS_IMG, { recursive: true });
  const agentLsp = agentLspPath();
  api = await startFakeApi([
    { content: [{ type: 'text', text: 'Hello from the other project.' }] },  // a session of another workspace
    ...WORKFLOW,
    { content: [{ type: 'text', text: "I'll change the greeting in `app.py`." },
      { type: 'tool_use', name: 'edit_file', input: { path: 'app.py', old_string: '"hi "', new_string: '"hello "' } }], delay: 0.01 },
    { content: [{ type: 'text', text: '`greet` now says **hello**.' }], delay: 0.01 },
    { content: [{ type: 'tool_use', name: 'get_diagnostics', input: { path: 'bad.json' } }] },
    { content: [{ type: 'text', text: 'bad.json has a syntax error.' }] },
    { content: [{ type: 'text', text: LONG_REPLY }] },
    { content: [{ type: 'tool_use', name: 'edit_file', input: { path: 'app.py', old_string: '"hi "', new_string: '"hey "' } }] },
    { content: [{ type: 'tool_use', name: 'edit_file', input: { path: 'app.py', old_string: '"hey "', new_string: '"yo "' } }] },
    { content: [{ type: 'text', text: 'OK, I left it at hey.' }] },
    { content: [{ type: 'text', text: 'Bye for now.' }] },  // the queued message's reply
    { content: [{ type: 'text', text: 'Thinking about the whole codebase' }], hang: true },
    { content: [{ type: 'text', text: 'Ready.' }] },
    { content: [{ type: 'tool_use', name: 'run_command', input: { command: 'kill -9 $PPID' } }] },
    { content: [{ type: 'text', text: 'Still here after the restart.' }] },
    { content: [{ type: 'tool_use', name: 'edit_file', input: { path: 'app.py', old_string: 'def greet', new_string: 'def welcome' } }] },
    { content: [{ type: 'text', text: 'Renamed.' }] },
    { content: [{ type: 'text', text: 'The stray comma in bad.json is the problem.' }] },  // "Fix with agent"
    // "Who calls greet?": the language tools, answered by VS Code's TypeScript features through the extension
    { content: [
      { type: 'tool_use', name: 'find_references', input: { path: 'src/greet.ts', line: 1, column: 17 } },
      { type: 'tool_use', name: 'go_to_definition', input: { path: 'src/main.ts', line: 3, column: 24 } },
      { type: 'tool_use', name: 'hover', input: { path: 'src/main.ts', line: 3, column: 24 } },
    ] },
    { content: [{ type: 'text', text: '`greet` is called by `Greeter.hello` and four times in main.ts.' }] },
    { content: [{ type: 'tool_use', name: 'rename_symbol', input: { path: 'src/greet.ts', line: 1, column: 17, newName: 'welcome' } }] },
    { content: [{ type: 'text', text: 'Renamed greet to welcome.' }] },
  ]);
  const { dir, ws } = prepare(agentLsp);
  log('vsix installed');

  // A session made in another folder, in the same store: the panel must not list it.
  const other = await startServer(api.url, { workspace: path.join(dir, 'other'), dataDir: path.join(dir, 'data') });
  await other.conn.sendRequest('agent/chat', { message: 'A chat in another project' });
  const features = other.init.capabilities.experimental.agent.features ?? [];
  await other.stop();

  const port = await freePort();
  cs = startCodeServer(dir, ws, port, api.url);
  await until('code-server to listen', () => cs.output().includes('HTTP server listening'));
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const context = await browser.newContext({ viewport: { width: 1400, height: 860 }, permissions: ['clipboard-read', 'clipboard-write'] });
  page = await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: LONG });
  log('workbench loaded');

  await check('the extension activates on start-up and its status bar item says the server is ready', async () => {
    await page.waitForSelector('.statusbar-item[aria-label="Agent LSP: ready"]', { timeout: LONG });
  });

  await check('app.py opens in an editor', async () => {
    await until('the explorer', () => page.$('.explorer-folders-view .monaco-list-row[aria-label*="app.py"]'));
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

  /** Takes the panel (the webview's frame element) as a PNG into docs/img/. */
  const shoot = async (name) => {
    const element = await frame.parentFrame().frameElement();
    await element.screenshot({ path: path.join(DOCS_IMG, name) });
  };

  // Protocol 1.2's workflow (§9): the plan, subagents, slash commands, images. Its replies come first in the
  // script, so `E2E_ONLY='Open Chat|workflow'` runs it alone.
  await (features.includes('plan') && features.includes('task') ? check : skip)('workflow: the plan pinned above the chat '
    + '(live, and redrawn from agent/history), the subagent\'s calls under its task, / commands, a pasted image, '
    + 'web_fetch asking with its URL', async () => {
    await colorTheme(page, 'Light Modern', 'vs:not(.vs-dark)');
    await until('the theme in the webview', () => frame.evaluate(() => document.body.classList.contains('vscode-light')));
    // Every state the plan shows, as it changes (each update is its own message to the webview).
    await frame.evaluate(() => {
      window.__planSeen = [];
      new MutationObserver(() => {
        const count = document.querySelector('#plan .plan-count')?.textContent;
        if (count && window.__planSeen.at(-1) !== count) window.__planSeen.push(count);
      }).observe(document.getElementById('plan'), { childList: true, subtree: true });
    });
    await frame.fill('#prompt', 'Where is greet, and what does it return?');
    await frame.press('#prompt', 'Enter');
    await frame.waitForSelector('.result', { timeout: LONG });
    assert.deepEqual(await frame.evaluate(() => window.__planSeen), ['0/2 done', '2/2 done']);
    assert.deepEqual(await frame.$$eval('#plan .plan-entry', (ns) => ns.map((n) => [n.className, n.textContent])),
      [['plan-entry completed', '✓Find greet'], ['plan-entry completed', '✓Explain what it returns']]);
    // The subagent's search is inside the task's card, collapsed; the transcript's own cards are the main agent's.
    assert.deepEqual(await frame.$$eval('#transcript > .tool', (ns) => ns.map((n) => n.querySelector('.tool-title').textContent)),
      ['Update the plan', 'Task: find greet', 'Update the plan']);
    const task = '#transcript > .tool:has(.subagent)';
    assert.equal(await frame.textContent(`${task} .subagent > summary`), 'Subagent: 1 tool call');
    assert.equal(await frame.$eval(`${task} .subagent`, (d) => d.open), false);
    await frame.click(`${task} .subagent > summary`);
    assert.deepEqual(await frame.$$eval(`${task} .subagent .tool`, (ns) => ns.map((n) => n.className)), ['tool kind-search status-completed']);
    assert.match(await frame.textContent(`${task} .subagent .tool .tool-output`), /app\.py:1: def greet/);
    const [main1, sub1, sub2] = api.requests().slice(1, 4);
    assert.deepEqual(sub1.messages.map((m) => m.role), ['user'], 'the subagent starts with a fresh context');
    assert.match(JSON.stringify(sub1.messages), /Where is greet defined\?/);
    assert.doesNotMatch(JSON.stringify(sub1.messages), /what does it return/);
    assert.ok(!sub1.tools.some((t) => ['edit_file', 'run_command', 'task'].includes(t.name)), 'read-only tools');
    assert.ok(main1.tools.some((t) => t.name === 'task') && sub2.messages.length === 3);
    await shoot('vscode-plan-light.png');

    // A new conversation has no plan; reopening this one redraws it from agent/history.
    await frame.click('#new-session');
    await frame.waitForSelector('#plan', { state: 'hidden' });
    await until('the session in the list', () => frame.$$eval('#sessions option', (os) => os.some((o) => o.textContent.startsWith('Where is greet'))));
    await frame.selectOption('#sessions', await frame.$$eval('#sessions option', (os) => os.find((o) => o.textContent.startsWith('Where is greet')).value));
    await frame.waitForSelector('#plan .plan-entry');
    assert.equal(await frame.textContent('#plan .plan-count'), '2/2 done');

    // `/` completes the server's commands (agent/commands); /memory runs a builtin, with no model call.
    if (features.includes('commands')) {
      await frame.click('#prompt');
      await frame.type('#prompt', '/');
      await frame.waitForSelector('#command-list li >> text=/memory', { timeout: LONG });
      const names = await frame.$$eval('#command-list .command-name', (ns) => ns.map((n) => n.textContent));
      assert.ok(names.includes('/compact') && names.includes('/memory'), names.join(' '));
      await shoot('vscode-commands-light.png');
      await frame.type('#prompt', 'mem');
      await frame.waitForFunction(() => document.querySelectorAll('#command-list li').length === 1);
      await frame.press('#prompt', 'Enter');
      assert.equal(await frame.inputValue('#prompt'), '/memory ');
      const [before, results] = [api.requests().length, await frame.$$eval('.result', (ns) => ns.length)];
      await frame.press('#prompt', 'Enter');
      await until('the /memory answer', async () => (await frame.$$eval('.result', (ns) => ns.length)) === results + 1);
      assert.match(await frame.locator('.msg.assistant').last().textContent(), /memory/i);
      assert.equal(api.requests().length, before, '/memory makes no model call');
    }

    // A pasted image: a thumbnail in the message being written and in the sent message; the model gets it.
    await frame.evaluate((png) => {
      const data = new DataTransfer();
      data.items.add(new File([Uint8Array.from(atob(png), (c) => c.charCodeAt(0))], 'square.png', { type: 'image/png' }));
      document.getElementById('prompt').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    }, PNG);
    await frame.waitForSelector('#attachments .thumbnail img[alt="square.png"]');
    // Agent: Attach Image… from the explorer's context menu of an image file
    await runCommand(page, 'View: Show Explorer');  // the chat is in the same side bar; the command brings it back
    await page.click('.explorer-folders-view .monaco-list-row[aria-label*="shot.png"]', { button: 'right', timeout: LONG });
    await page.hover('.context-view .action-label:text-is("Attach Image…")', { timeout: LONG });
    await page.keyboard.press('Enter');  // as with the Quick Fix menu: Enter runs the highlighted item
    await frame.waitForSelector('#attachments .thumbnail img[alt="shot.png"]', { timeout: LONG });
    await frame.click('#attachments .thumbnail:has(img[alt="shot.png"]) .thumbnail-remove');
    await frame.waitForFunction(() => document.querySelectorAll('#attachments .thumbnail').length === 1);
    await frame.fill('#prompt', 'What is in this picture?');
    await shoot('vscode-images-light.png');
    const before = api.requests().length;
    await frame.press('#prompt', 'Enter');
    await frame.waitForSelector('.msg.assistant >> text=A small green square.', { timeout: LONG });
    assert.equal(await frame.isHidden('#attachments'), true);
    assert.equal(await frame.locator('.msg.user').last().locator('.thumbnail img').count(), 1);
    if (features.includes('images')) {
      const sent = api.requests()[before].messages.at(-1).content;
      assert.ok(sent.some((b) => b.type === 'image' && b.source?.data === PNG), JSON.stringify(sent).slice(0, 400));
    }
    await until('the chat to end', async () => await frame.isEnabled('#send'));

    // web_fetch asks first (default mode), showing the URL; rejected, nothing is fetched and the model is told.
    if (features.includes('webFetch')) {
      await frame.fill('#prompt', 'Read the greet docs page');
      await frame.press('#prompt', 'Enter');
      const question = await frame.waitForSelector('.tool.kind-fetch .confirm', { timeout: LONG });
      assert.equal(await frame.textContent('.tool.kind-fetch .confirm-question'), 'Fetch this page?');
      assert.equal(await frame.textContent('.tool.kind-fetch .fetch-url'), 'https://docs.example.com/greet?lang=en');
      assert.equal(await frame.$$eval('.tool.kind-fetch pre.command', (ns) => ns.length), 0, 'the URL is shown once');
      await question.scrollIntoViewIfNeeded();
      await shoot('vscode-web-fetch-light.png');
      await frame.click('.tool.kind-fetch .confirm button[data-decision="reject_once"]');
      await frame.waitForSelector('.msg.assistant >> text=I will not read that page, then.', { timeout: LONG });
      assert.equal(await frame.locator('.tool.kind-fetch').last().getAttribute('class'), 'tool kind-fetch status-rejected');
      assert.match(JSON.stringify(api.requests().at(-1).messages.at(-1).content), /declined|reject/i);
      await until('the chat to end', async () => await frame.isEnabled('#send'));
    }
    await frame.click('#new-session');
    await frame.waitForSelector('.welcome');
    await colorTheme(page, 'Dark Modern', 'vs-dark');
  });

  await check('a chat streams into the panel, and "Allow once" lets the edit into the buffer', async () => {
    await frame.fill('#prompt', 'Make greet say hello');
    await frame.press('#prompt', 'Enter');
    const allow = await frame.waitForSelector('.confirm button[data-decision="allow_once"]', { timeout: LONG });
    assert.match(await frame.textContent('.tool.kind-edit .diff'), /-    return "hi " \+ name\n\+    return "hello " \+ name/);
    assert.equal(await editorText(page), SOURCE, 'nothing changes before the user allows it');
    await allow.click();
    await frame.waitForSelector('.result', { timeout: LONG });
    assert.deepEqual(await frame.$$eval('#transcript > *', (ns) => ns.map((n) => n.className)),
      ['msg user', 'msg assistant', 'tool kind-edit status-completed', 'msg assistant', 'result end_turn']);
    assert.deepEqual(await frame.$$eval('.msg.assistant .markdown', (ns) => ns.map((n) => n.textContent.trim())),
      ["I'll change the greeting in app.py.", 'greet now says hello.']);
    assert.equal(await frame.textContent('.confirm.answered'), 'Allowed once');
    const footer = await frame.$eval('.result', (n) => [...n.querySelectorAll('.result-label, .result-meta')].map((x) => x.textContent).join(''));
    assert.match(footer, /^Done · 2 turns · 1 tool call · [0-9.]+ s · [0-9,]+ tokens$/);
  });

  await check('the edit is in the document inside VS Code (unsaved), and the model got the tool result', async () => {
    await until('the edited text in the editor', async () => (await editorText(page)) === EDITED);
    assert.equal(fs.readFileSync(path.join(ws, 'app.py'), 'utf8'), SOURCE, 'the file on disk is untouched');
    const tab = await page.$eval('.tabs-container .tab[aria-label*="app.py"]', (n) => n.className);
    assert.match(tab, /\bdirty\b/, `the tab shows unsaved changes (${tab})`);
    const second = api.requests()[2 + WORKFLOW.length];
    const toolResult = second.messages.at(-1).content.find((b) => b.type === 'tool_result');
    assert.match(JSON.stringify(toolResult.content), /Edited app\.py/);
  });
  await page.screenshot({ path: path.join(OUT, 'e2e-workbench.png') });

  await check('Undo in the editor takes the agent\'s edit back', async () => {
    await page.click('.editor-instance .view-lines');
    await page.keyboard.press('Control+Z');
    await until('the original text after undo', async () => (await editorText(page)) === SOURCE);
  });

  await check('the agent sees VS Code\'s own diagnostics (the JSON language server\'s), via agent/diagnostics', async () => {
    await page.keyboard.press('Control+P');
    await page.waitForSelector('.quick-input-widget .quick-input-box input');
    await page.keyboard.type('bad.json');
    await page.waitForSelector('.quick-input-list .monaco-list-row[aria-label*="bad.json"]');
    await page.keyboard.press('Enter');
    await until('the JSON error in the Problems count', async () =>
      /^1\s*0$/.test((await page.textContent('#status\\.problems'))?.trim() ?? ''));
    await frame.fill('#prompt', 'Any problems in bad.json?');
    await frame.press('#prompt', 'Enter');
    await frame.waitForSelector('.result >> nth=1', { timeout: LONG });
    const toolResult = api.requests()[4 + WORKFLOW.length].messages.at(-1).content.find((b) => b.type === 'tool_result');
    assert.equal(toolResult.content, 'bad.json:1:9: error: Property expected [json]');
  });

  await check('code blocks are highlighted, tables have borders, and Copy puts the code on the clipboard', async () => {
    await frame.fill('#prompt', 'Explain greet');
    await frame.press('#prompt', 'Enter');
    await frame.waitForSelector('.result >> nth=2', { timeout: LONG });
    const block = frame.locator('.codeblock').last();
    assert.equal(await block.locator('.code-lang').textContent(), 'python');
    assert.ok(await block.locator('pre code .hljs-keyword').count() > 0, 'python keywords are highlighted');
    const border = await frame.$eval('.markdown td', (td) => getComputedStyle(td).borderTopStyle);
    assert.equal(border, 'solid');
    await block.locator('button.copy').click();
    let clip;
    await page.click('.editor-group-container');  // the browser reads the clipboard only for the focused page
    await until('the code on the clipboard', async () => {
      clip = await page.evaluate(() => navigator.clipboard.readText().then((t) => t, (e) => `(error: ${e.message})`));
      return clip === CODE;
    }).catch((e) => { throw new Error(`${e.message}; it has ${JSON.stringify(clip)}`); });
    assert.equal(await block.locator('button.copy').textContent(), 'Copied');
  });

  await check('a confirmation is scrolled into view with focus on "Allow once": Enter allows, Escape rejects; '
    + 'a message typed meanwhile is queued and sent when the chat ends', async () => {
    await frame.$eval('#transcript', (t) => { t.scrollTop = 0; });  // the user scrolled up: no following
    await frame.fill('#prompt', 'Make it say hey');
    await frame.press('#prompt', 'Enter');
    await frame.waitForSelector('.tool.status-awaiting_confirmation .confirm button', { timeout: LONG });
    const first = '.tool.status-awaiting_confirmation .confirm button[data-decision="allow_once"]';
    assert.ok(await inView(frame, first), 'the question is in view');
    assert.equal(await frame.evaluate(() => document.activeElement?.dataset.decision), 'allow_once');
    await page.keyboard.press('Enter');
    await frame.waitForSelector('.confirm.answered >> text=Allowed once >> nth=1', { timeout: LONG });
    await until('the second question, focused', async () =>
      (await frame.evaluate(() => document.activeElement?.dataset.decision)) === 'allow_once'
      && await frame.$$eval('.tool.status-awaiting_confirmation', (ns) => ns.length) === 1);
    assert.ok(await inView(frame, first), 'the second question is in view');
    await frame.fill('#prompt', 'Then say bye');
    await frame.press('#prompt', 'Enter');
    assert.equal(await frame.textContent('#queued .queued-text'), 'Then say bye');
    assert.equal(await frame.inputValue('#prompt'), '');
    await page.keyboard.press('Escape');
    await frame.waitForSelector('.tool.status-rejected', { timeout: LONG });
    await until('the queued message sent after the chat ended', async () =>
      (await frame.$$eval('.msg.user', (ns) => ns.map((n) => n.textContent))).at(-1) === 'Then say bye');
    await frame.waitForSelector('.msg.assistant >> text=Bye for now.', { timeout: LONG });
    await frame.waitForSelector('.result >> nth=4', { timeout: LONG });
    assert.equal(await frame.isHidden('#queued'), true);
    const order = await frame.$$eval('#transcript > *', (ns) => ns.slice(-8).map((n) => n.className));
    assert.deepEqual(order, ['msg user', 'tool kind-edit status-completed', 'tool kind-edit status-rejected',
      'msg assistant', 'result end_turn', 'msg user', 'msg assistant', 'result end_turn']);
    const sent = api.requests().at(-1).messages.at(-1);
    assert.match(JSON.stringify(sent.content), /Then say bye/);
  });

  await check('screenshots of the panel in the dark and light themes', async () => {
    // The chat with the two edits (a diff, an answered and a rejected question) and the queued message after it.
    await frame.$$eval('.msg.user', (ns) => ns.find((n) => n.textContent === 'Make it say hey').scrollIntoView({ block: 'start' }));
    await colorTheme(page, 'Dark Modern', 'vs-dark');
    await until('the theme in the webview', () => frame.evaluate(() => document.body.classList.contains('vscode-dark')));
    await shoot('vscode-panel-dark.png');
    await colorTheme(page, 'Light Modern', 'vs:not(.vs-dark)');
    await until('the theme in the webview', () => frame.evaluate(() => document.body.classList.contains('vscode-light')));
    await shoot('vscode-panel-light.png');
  });

  for (const [theme, cls] of [['Dark High Contrast', 'hc-black'], ['Light High Contrast', 'hc-light']]) {
    await check(`${theme}: inline code's colour differs from its background`, async () => {
      await colorTheme(page, theme, cls);
      await until('the theme in the webview', () => frame.evaluate((c) => document.body.classList.contains(`vscode-high-contrast${c === 'hc-light' ? '-light' : ''}`), cls));
      const [color, background] = await frame.$eval('.markdown p code', (code) => {
        let node = code;
        let bg = getComputedStyle(node).backgroundColor;
        while (bg === 'rgba(0, 0, 0, 0)' && node.parentElement) { node = node.parentElement; bg = getComputedStyle(node).backgroundColor; }
        return [getComputedStyle(code).color, bg];
      });
      assert.notEqual(color, background, `${color} on ${background}`);
      if (cls === 'hc-black') await shoot('vscode-panel-high-contrast.png');
    });
  }

  await check('Stop ends a hanging chat (its progress shown in the status bar): "Stopped", ready again', async () => {
    await frame.fill('#prompt', 'Now refactor everything');
    await frame.press('#prompt', 'Enter');
    await frame.waitForSelector('.msg.assistant >> text=Thinking about the whole codebase', { timeout: LONG });
    const progress = await page.waitForSelector('.statusbar-item:has-text("Agent: Thinking")', { timeout: LONG });
    assert.equal((await progress.textContent()).trim(), 'Agent: Thinking…');
    await frame.click('#stop');
    await frame.waitForSelector('.result.aborted', { timeout: LONG });
    assert.match(await frame.textContent('.result.aborted'), /^Stopped · 1 turn · 0 tool calls/);
    assert.equal(await frame.isEnabled('#send'), true);
  });

  // Sessions per workspace came with protocol 1.1's sessions layer (the server lists "newSession" with it).
  await (features.includes('newSession') ? check : skip)('the session list shows this workspace\'s sessions only', async () => {
    await until('the session list', () => frame.$('#sessions option:not([value=""])'));
    const titles = await frame.$$eval('#sessions option', (os) => os.map((o) => o.textContent));
    assert.ok(titles.some((t) => t.startsWith('Make greet say hello')), `this workspace's conversation is listed: ${titles}`);
    assert.ok(!titles.some((t) => t.startsWith('A chat in another project')), `another workspace's is not: ${titles}`);
  });

  await check('a reopened session redraws its tool cards with their results and diffs', async () => {
    await frame.click('#new-session');
    await frame.waitForSelector('.welcome');
    const first = await frame.$$eval('#sessions option', (os) => os.find((o) => o.textContent.startsWith('Make greet say hello'))?.value);
    assert.ok(first, 'the conversation is listed, titled by its first message');
    await frame.selectOption('#sessions', first);
    await frame.waitForSelector('.tool.kind-edit');
    assert.deepEqual(await frame.$$eval('.msg.user', (ns) => ns.map((n) => n.textContent)), [
      'Make greet say hello', 'Any problems in bad.json?', 'Explain greet', 'Make it say hey', 'Then say bye',
      'Now refactor everything']);
    assert.deepEqual(await frame.$$eval('.tool', (ns) => ns.map((n) => n.className)), [
      'tool kind-edit status-completed', 'tool kind-read status-completed', 'tool kind-edit status-completed',
      'tool kind-edit status-rejected']);
    assert.match(await frame.textContent('.tool.kind-edit .diff'), /\+    return "hello " \+ name/);
    assert.match(await frame.textContent('.tool.kind-edit .tool-output'), /Edited app\.py/);
    assert.match(await frame.textContent('.tool.kind-read .tool-output'), /bad\.json:1:9: error: Property expected/);
  });

  await check('a server that dies mid-chat: the chat fails with its last stderr lines and Restart; after the '
    + 'restart the session goes on', async () => {
    await frame.fill('#prompt', 'Before the crash');
    await frame.press('#prompt', 'Enter');
    await frame.waitForSelector('.msg.assistant >> text=Ready.', { timeout: LONG });
    await until('the chat to end', async () => await frame.isEnabled('#send'));
    await frame.fill('#prompt', 'Crash please');
    await frame.press('#prompt', 'Enter');
    await (await frame.waitForSelector('.confirm button[data-decision="allow_once"]', { timeout: LONG })).click();
    const failed = await frame.waitForSelector('.notice.error >> text=The agent server stopped during this chat.', { timeout: LONG });
    assert.ok((await frame.textContent('.notice.error pre.stderr')).trim(), 'the server\'s last stderr lines are shown');
    assert.equal(await frame.textContent('#banner[data-state="crashed"] p'), 'The agent server stopped. Restart it to go on; your sessions are kept.');
    assert.notEqual(await frame.textContent('#status'), 'Working…');
    assert.equal(await frame.isEnabled('#send'), true);
    await frame.click('#banner button[data-command="restart"]');
    await frame.waitForSelector('#banner', { state: 'hidden', timeout: LONG });
    await page.waitForSelector('.statusbar-item[aria-label="Agent LSP: ready"]', { timeout: LONG });
    await frame.fill('#prompt', 'Are you there?');
    await frame.press('#prompt', 'Enter');
    await frame.waitForSelector('.msg.assistant >> text=Still here after the restart.', { timeout: LONG });
    const body = api.requests().at(-1);
    assert.match(JSON.stringify(body.messages), /Before the crash/, 'the model got the same session\'s history');
  });

  await (features.includes('revert') ? check : skip)('"Revert this turn" on the last chat puts the buffer back as it was before that chat', async () => {
    await page.click('.tabs-container .tab[aria-label*="app.py"]');
    await until('app.py in the editor', () => page.$('.tabs-container .tab.active[aria-label*="app.py"]'));
    const before = await editorText(page);
    assert.match(before, /^def greet/);
    await frame.fill('#prompt', 'Rename greet to welcome');
    await frame.press('#prompt', 'Enter');
    await (await frame.waitForSelector('.tool.status-awaiting_confirmation .confirm button[data-decision="allow_once"]', { timeout: LONG })).click();
    await frame.waitForSelector('.msg.assistant >> text=Renamed.', { timeout: LONG });
    await until('the chat to end', async () => await frame.isEnabled('#send'));
    await until('the edit in the buffer', async () => (await editorText(page)) === before.replace('def greet', 'def welcome'));
    const labels = await frame.$$eval('.result button.revert', (ns) => ns.map((n) => n.textContent));
    assert.equal(labels.at(-1), 'Revert this turn');
    assert.ok(labels.slice(0, -1).every((l) => l === 'Revert to before this turn'), labels.join(', '));
    await frame.locator('.result button.revert').last().click();
    await until('the buffer as before the chat', async () => (await editorText(page)) === before);
    await frame.waitForSelector('.notice.info >> text=Reverted app.py.', { timeout: LONG });
  });

  await (features.includes('codeActions') ? check : skip)('the Quick Fix menu\'s "Fix with agent" on a JSON error runs a chat the panel shows to its end', async () => {
    await page.click('.tabs-container .tab[aria-label*="bad.json"]');
    await until('bad.json in the editor', () => page.$('.tabs-container .tab.active[aria-label*="bad.json"]'));
    await page.click('.editor-instance .view-lines');
    await page.keyboard.press('Control+Home');
    for (let k = 0; k < 8; k++) await page.keyboard.press('ArrowRight');  // onto the stray comma (1:9)
    await page.keyboard.press('Control+.');
    await page.waitForSelector('.action-widget .monaco-list-row.focused >> text=Fix with agent', { timeout: LONG });
    await page.keyboard.press('Enter');  // the menu's pointer block takes clicks; Enter runs the focused action
    await frame.waitForSelector('.msg.user >> text=Fix with agent: Property expected', { timeout: LONG });
    await frame.waitForSelector('.msg.assistant >> text=The stray comma in bad.json is the problem.', { timeout: LONG });
    await until('the chat\'s result last in the panel', async () =>
      (await frame.$$eval('#transcript > *', (ns) => ns.at(-1).className)).startsWith('result'));
    assert.equal(await frame.isEnabled('#send'), true);
    const sent = JSON.stringify(api.requests().at(-1).messages);
    assert.match(sent, /Property expected/, 'the model got the diagnostic');
  });

  /** The ghost text the editor shows now (its inline part), or '' when there is none. */
  const ghostText = () => page.$$eval('.editor-instance .ghost-text-decoration', (ns) =>
    ns.map((n) => n.textContent).join('').replace(/\u00a0/g, ' '));
  /** The message of the newest notification toast. */
  const lastToast = async () => (await page.$$eval('.notifications-toasts .notification-list-item-message',
    (ns) => ns.map((n) => n.textContent))).at(-1) ?? '';
  /** The server's count of suggestion requests, through Agent: Show Suggestion Statistics (its toast read,
   * then every toast cleared so the next one is new). */
  const suggestionRequests = async () => {
    await runCommand(page, 'Notifications: Clear All Notifications');
    await until('no toasts', async () => (await page.$$('.notifications-toasts .notification-list-item')).length === 0);
    await runCommand(page, 'Agent: Show Suggestion Statistics');
    const toast = await until('the figures', async () => /^Suggestions since the server started: (\d+) request/.exec(await lastToast()));
    return Number(toast[1]);
  };
  /** The text of the editor's line `n` (1-based) without the ghost text shown in it. */
  const editorLine = async (n) => {
    const lines = await page.$$eval('.editor-instance .view-lines .view-line', (ns) => ns.map((node) => {
      const copy = node.cloneNode(true);
      copy.querySelectorAll('.ghost-text-decoration, .ghost-text-decoration-preview').forEach((g) => g.remove());
      return { top: parseFloat(node.style.top), text: copy.textContent.replace(/\u00a0/g, ' ') };
    }));
    return lines.sort((a, b) => a.top - b.top)[n - 1]?.text;
  };

  await (features.includes('inlineCompletion') ? check : skip)('suggestions as you type: the status bar item says '
    + 'on, typing shows the demo model\'s ghost text, Ctrl+Right takes a word, Tab the rest; the server counts the '
    + 'acceptances, the chat panel stays out of it; a click on the item turns them off (no ghost text) and on', async () => {
    await page.waitForSelector('.statusbar-item[aria-label="Agent suggestions: on"]', { timeout: LONG });
    await quickOpen(page, 'walk.py');
    await until('walk.py\'s text', async () => (await editorText(page)) === WALK_PY);
    const messagesBefore = await frame.$$eval('.msg.user', (ns) => ns.length);
    await page.click('.editor-instance .view-lines');
    await page.keyboard.press('Control+End');  // the empty last line (8)
    await page.keyboard.type('tot');
    await until('the ghost text of the total line', async () => (await ghostText()) === 'al = sum(len(files) for _, _, files in os.walk("."))');
    await page.keyboard.press('Control+ArrowRight');  // the editor's own accept-next-word key
    await until('one word taken', async () => (await editorLine(8)) === 'total');
    await until('the rest still shown', async () => (await ghostText()) === ' = sum(len(files) for _, _, files in os.walk("."))');
    await page.keyboard.press('Tab');
    await until('the line completed', async () => (await editorLine(8)) === 'total = sum(len(files) for _, _, files in os.walk("."))');
    assert.equal(await ghostText(), '');
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('for ro');
    await until('the ghost text of the for line', async () => (await ghostText()) === 'ot, dirs, files in os.walk("."):');
    // The picture for docs/vscode.md: a smaller window, so the ghost text and the status bar item read well.
    await page.setViewportSize({ width: 1000, height: 420 });
    try {
      await until('the ghost text after the resize', async () => (await ghostText()) === 'ot, dirs, files in os.walk("."):');
      await page.screenshot({ path: path.join(DOCS_IMG, 'vscode-suggestion.png') });
    } finally {
      await page.setViewportSize({ width: 1400, height: 860 });  // the size every other case has
    }
    await page.keyboard.press('Tab');
    await until('the line completed', async () => (await editorLine(9)) === 'for root, dirs, files in os.walk("."):');
    assert.equal((await editorText(page)).split('\n').slice(0, 7).join('\n') + '\n', WALK_PY, 'the lines above untouched');
    assert.equal(fs.readFileSync(path.join(ws, 'walk.py'), 'utf8'), WALK_PY, 'in the buffer, not on disk');
    // The accepted items' command went to the server (which counts it), not to the chat panel.
    const requestsBefore = await suggestionRequests();
    assert.match(await lastToast(), /, 2 accepted, /);
    assert.equal(await frame.$$eval('.msg.user', (ns) => ns.length), messagesBefore, 'no chat ran');
    assert.notEqual(await frame.textContent('#status'), 'Working…');
    // Off: the item says so, the setting holds it, and typing asks the server nothing.
    await page.click('.statusbar-item[aria-label="Agent suggestions: on"]');
    await page.waitForSelector('.statusbar-item[aria-label="Agent suggestions: off"]', { timeout: LONG });
    await until('the setting saved', () => JSON.parse(fs.readFileSync(path.join(dir, 'ud/User/settings.json'), 'utf8'))['agentLsp.completions.enabled'] === false);
    await page.click('.editor-instance .view-lines');
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');  // line 10 (indented by the editor after the colon, or not)
    await page.keyboard.type('pri');
    await page.keyboard.press('Alt+\\');  // the editor's own "Trigger Inline Suggestion": asks every provider now
    assert.equal(await suggestionRequests(), requestsBefore, 'no request while off');
    assert.equal(await ghostText(), '');
    // On again: the next keystroke brings a suggestion back.
    await page.click('.statusbar-item[aria-label="Agent suggestions: off"]');
    await page.waitForSelector('.statusbar-item[aria-label="Agent suggestions: on"]', { timeout: LONG });
    await page.click('.editor-instance .view-lines');
    await page.keyboard.press('Control+End');
    await page.keyboard.type('n');
    await until('the ghost text again', async () => (await ghostText()) === 't(root, len(files))');
    await page.keyboard.press('Escape');
  });

  /** What the editor shows beside the text (the new text of a next edit, an after-decoration), line by line. */
  const besideText = () => page.$$eval('.editor-instance .view-lines .view-line span', (ns) =>
    ns.map((n) => getComputedStyle(n, '::after').content).filter((c) => c && c !== 'none' && c !== 'normal')
      .map((c) => c.replace(/^"|"$/g, '').replace(/\u00a0/g, ' ')));
  /** The line:column the status bar shows for the cursor ("Ln 3, Col 5" → [3, 5]). */
  const cursorAt = async () => {
    const text = await page.textContent('.statusbar-item[id="status.editor.selection"]');
    const m = /Ln (\d+), Col (\d+)/.exec(text ?? '');
    return m ? [Number(m[1]), Number(m[2])] : undefined;
  };
  const decorated = (cls) => page.$$eval(`.editor-instance ${cls}`, (ns) => ns.length);

  await (features.includes('nextEdits') ? check : skip)('next-edit suggestions (needs the server\'s features.nextEdits): '
    + 'a word renamed on line 1, the demo model offers the same rename on line 3 — the old text struck through, the '
    + 'new beside it, an arrow in the gutter; Tab jumps there, Tab applies it, the next one comes; Escape dismisses; '
    + 'the status bar item turns them off (the setting saved) and on (offered again)', async () => {
    await page.waitForSelector('.statusbar-item[aria-label="Agent next edits: on"]', { timeout: LONG });
    await quickOpen(page, 'tally.py');
    await until('tally.py\'s text', async () => (await editorText(page)) === TALLY_PY);
    await page.click('.editor-instance .view-lines');
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('Control+Shift+ArrowRight');  // selects `count`
    await page.keyboard.insertText('tally');  // one change (typed keys may pause between them on a loaded machine)
    await until('the next edit beside line 3', async () => (await besideText()).includes('tally'));
    assert.equal(await ghostText(), '', 'no ghost text beside a next edit');
    assert.ok(await decorated('.glyph-margin-widgets .cgmr, .margin-view-overlays .cgmr'), 'the gutter marks the edit away from the cursor');
    // The picture for docs/vscode.md.
    await page.setViewportSize({ width: 1000, height: 420 });
    try {
      await until('the next edit after the resize', async () => (await besideText()).includes('tally'));
      await page.screenshot({ path: path.join(DOCS_IMG, 'vscode-next-edit.png') });
    } finally {
      await page.setViewportSize({ width: 1400, height: 860 });
    }
    assert.deepEqual(await cursorAt(), [1, 6]);
    await page.keyboard.press('Tab');  // jumps
    await until('the cursor at the edit', async () => JSON.stringify(await cursorAt()) === '[3,5]');
    assert.equal(await editorLine(3), '    count += item', 'the jump changed nothing');
    await page.keyboard.press('Tab');  // applies
    await until('line 3 renamed', async () => (await editorLine(3)) === '    tally += item');
    await until('the cursor after the new text', async () => JSON.stringify(await cursorAt()) === '[3,10]');
    await suggestionRequests();  // Agent: Show Suggestion Statistics: the accepted edit's command reached the server
    assert.match(await lastToast(), / Next edits: .*; \d+ shown, 1 accepted; /);
    await page.click('.editor-instance .view-lines');  // back in the editor…
    await page.keyboard.press('Control+Home');
    for (let k = 0; k < 2; k++) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('End');  // …where the edit was applied (line 3, after `tally += item`)
    // The applied edit is the latest change: the demo carries it on to line 4.
    await until('the next edit beside line 4', async () => (await besideText()).includes('tally'));
    await page.keyboard.press('Escape');
    await until('the next edit dismissed', async () => !(await besideText()).includes('tally'));
    assert.equal(await editorLine(4), 'print(count)', 'dismissing changed nothing');
    assert.equal(fs.readFileSync(path.join(ws, 'tally.py'), 'utf8'), TALLY_PY, 'in the buffer, not on disk');
    // Off: nothing is offered after the next edit (the setting holds it); on again: it comes back.
    await page.click('.statusbar-item[aria-label="Agent next edits: on"]');
    await page.waitForSelector('.statusbar-item[aria-label="Agent next edits: off"]', { timeout: LONG });
    await until('the setting saved', () => JSON.parse(fs.readFileSync(path.join(dir, 'ud/User/settings.json'), 'utf8'))['agentLsp.nextEdits.enabled'] === false);
    await page.click('.statusbar-item[aria-label="Agent next edits: off"]');
    await page.waitForSelector('.statusbar-item[aria-label="Agent next edits: on"]', { timeout: LONG });
    await page.click('.editor-instance .view-lines');
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('Control+Shift+ArrowRight');  // `tally` again
    await page.keyboard.insertText('acc');  // no line of an open file starts so: no ghost text
    await until('a next edit again', async () => (await besideText()).includes('acc'));
    await page.keyboard.press('Escape');
  });

  /** Sets agentLsp.serverCommand through the settings.json editor, as a user would (code-server does not notice
   * the file changing on disk). */
  const setServerCommand = async (value) => {
    const settings = JSON.parse(fs.readFileSync(path.join(dir, 'ud/User/settings.json'), 'utf8'));
    await runCommand(page, 'Preferences: Open User Settings (JSON)');
    await until('settings.json in the editor', () => page.$('.tabs-container .tab.active[aria-label*="settings.json"]'));
    await page.click('.editor-instance .view-lines');
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');  // with a selection, typing a quote or brace would surround it
    await page.keyboard.insertText(JSON.stringify({ ...settings, 'agentLsp.serverCommand': value }, null, 1));
    await page.keyboard.press('Control+S');
    let text;
    await until('settings.json saved', () => {
      text = fs.readFileSync(path.join(dir, 'ud/User/settings.json'), 'utf8');
      try { return JSON.parse(text)['agentLsp.serverCommand'] === value; } catch { return false; }
    }).catch((e) => { throw new Error(`${e.message}: ${text}`); });
  };
  const INSTALL = 'Install agent-lsp with "pipx install agent-lsp-server" (or "uv tool install agent-lsp-server") and set agentLsp.serverCommand to its path.';

  /** Opens src/main.ts and waits for the TypeScript server to have loaded the project (its type error's squiggle). */
  const openTypeScript = async () => {
    await quickOpen(page, 'main.ts');
    await until('TypeScript\'s diagnostic in main.ts', () => page.$('.editor-instance .squiggly-error'));
  };

  await (features.includes('languageFeatures') ? check : skip)('the agent\'s find_references, go_to_definition and '
    + 'hover are answered by VS Code\'s TypeScript features (agent/languageFeature)', async () => {
    await openTypeScript();
    const toolsBefore = await frame.$$eval('.tool', (ns) => ns.length);
    await frame.fill('#prompt', 'Who calls greet?');
    await frame.press('#prompt', 'Enter');
    await frame.waitForSelector('.msg.assistant >> text=is called by', { timeout: LONG });
    await until('the chat to end', async () => await frame.isEnabled('#send'));
    const cards = (await frame.$$eval('.tool', (ns) => ns.map((n) => [n.className, n.querySelector('.tool-output')?.textContent ?? ''])))
      .slice(toolsBefore);
    assert.deepEqual(cards.map(([c]) => c), Array(3).fill('tool kind-read status-completed'));
    // What the model got: the tool results of its next request, in the order of its calls.
    const request = api.requests().find((r) => JSON.stringify(r.messages).includes('Who calls greet?')
      && r.messages.at(-1).content.some?.((b) => b.type === 'tool_result'));
    assert.ok(request, 'the model got the tool results');
    const results = request.messages.at(-1).content.filter((b) => b.type === 'tool_result')
      .map((b) => (typeof b.content === 'string' ? b.content : b.content.map((c) => c.text).join('')));
    assert.equal(results.length, 3);
    const [references, definition, hover] = results;
    // Every call and the import, sorted, without the declaration (1-based lines, columns in characters: the
    // emoji line's greet is at character 20, UTF-16 unit 21).
    const named = [...references.matchAll(/^(src\/[\w.]+:\d+:\d+)/gm)].map((m) => m[1]);
    assert.deepEqual(named, ['src/greet.ts:7:12', 'src/main.ts:1:10', 'src/main.ts:3:23', 'src/main.ts:5:13', 'src/main.ts:6:20'], references);
    assert.match(references, /src\/main\.ts:5:13: .*console\.log\(greet\('bob'\)/);
    assert.match(definition, /^src\/greet\.ts:1:17\b.*export function greet\(name: string\): string/s);
    assert.match(hover, /greet\(name: string\): string/);
    assert.doesNotMatch(hover, /agent-lsp\*\* wrote/);
    assert.equal(cards[0][1].trim(), references.trim(), 'the panel shows the model\'s answer');
  });

  await (features.includes('languageFeatures') && features.includes('revert') ? check : skip)('rename_symbol: '
    + 'VS Code\'s TypeScript rename, asked once with a diff of each file, lands in both buffers; Revert undoes it', async () => {
    await page.click('.tabs-container .tab[aria-label*="main.ts"]');
    await until('main.ts in the editor', () => page.$('.tabs-container .tab.active[aria-label*="main.ts"]'));
    await frame.fill('#prompt', 'Rename greet to welcome');
    await frame.press('#prompt', 'Enter');
    const allow = await frame.waitForSelector('.tool.status-awaiting_confirmation .confirm button[data-decision="allow_once"]', { timeout: LONG });
    const diff = await frame.locator('.tool.kind-edit .diff').last().textContent();
    assert.match(diff, /src\/greet\.ts[\s\S]*-export function greet\(name[\s\S]*\+export function welcome\(name/);
    assert.match(diff, /src\/main\.ts[\s\S]*\+console\.log\(welcome\('bob'\)/);
    assert.equal(await frame.$$eval('.tool.status-awaiting_confirmation', (ns) => ns.length), 1, 'one question for the whole rename');
    await allow.click();
    await frame.waitForSelector('.msg.assistant >> text=Renamed greet to welcome.', { timeout: LONG });
    await until('the chat to end', async () => await frame.isEnabled('#send'));
    assert.match(await frame.locator('.tool.kind-edit .tool-output').last().textContent(),
      /^Renamed greet to welcome: 6 edits in 2 files \(src\/greet\.ts, src\/main\.ts\)/);
    await until('the rename in main.ts\'s buffer', async () => (await editorText(page)).includes("console.log(welcome('bob')"));
    assert.equal(fs.readFileSync(path.join(ws, 'src/main.ts'), 'utf8'), MAIN_TS, 'in the buffer, not on disk');
    await frame.locator('.result button.revert').last().click();
    await until('the revert\'s notice', async () => (await frame.$$eval('.notice.info', (ns) => ns.map((n) => n.textContent)))
      .some((t) => /Reverted (greet\.ts, main\.ts|main\.ts, greet\.ts)\./.test(t)));
    await until('main.ts\'s buffer as before', async () => (await editorText(page)).includes("console.log(greet('bob')"));
  });

  await check('the extension answers agent/languageFeature with VS Code\'s TypeScript features, declares the '
    + 'methods, and keeps agent-lsp\'s own hover out (a stand-in server asks)', async () => {
    await openTypeScript();
    const probe = path.join(ROOT, 'test/fixtures/language-probe.py');
    const out = path.join(dir, 'data/probe.json');
    fs.rmSync(out, { force: true });
    await setServerCommand(probe);
    const { capabilities, answers: a, hoverRequests } = JSON.parse(await until('the probe\'s answers', () =>
      fs.existsSync(out) && fs.readFileSync(out, 'utf8')));
    const uri = (f) => `file://${ws}/src/${f}`;
    const at = (f, l1, c1, l2, c2) => ({ uri: uri(f), range: { start: { line: l1, character: c1 }, end: { line: l2, character: c2 } } });
    const pos = (loc) => `${loc.uri.split('/').at(-1)}:${loc.range.start.line}:${loc.range.start.character}`;
    // Every method the server lists in its languageMethods (docs/protocol.md): the extension keeps no list.
    assert.equal(capabilities.languageFeatures, true);
    assert.equal(a.definition.length, 1);
    assert.equal(a.definition[0].targetUri ?? a.definition[0].uri, uri('greet.ts'));
    assert.deepEqual(a.definition[0].targetSelectionRange ?? a.definition[0].range, at('greet.ts', 0, 16, 0, 21).range);
    const sorted = (locs) => locs.map(pos).sort();
    assert.deepEqual(sorted(a.references), ['greet.ts:6:11', 'main.ts:0:9', 'main.ts:2:22', 'main.ts:4:12', 'main.ts:5:20']);
    assert.deepEqual(sorted(a.referencesWithDeclaration), ['greet.ts:0:16', ...sorted(a.references)].sort());
    assert.equal(a.hover.contents.kind, 'markdown');
    assert.match(a.hover.contents.value, /greet\(name: string\): string/);
    assert.doesNotMatch(a.hover.contents.value, /probe hover/, 'agent-lsp\'s own hover is not in the answer');
    assert.deepEqual(hoverRequests, [], 'its hover provider was not even asked');
    assert.deepEqual(a.documentSymbol.map((s) => [s.name, s.kind, (s.children ?? []).map((c) => [c.name, c.kind])]),
      [['greet', 12, []], ['Greeter', 5, [['hello', 6]]], ['Speaker', 11, [['hello', 6]]]]);
    assert.ok(a.workspaceSymbol.some((s) => s.name === 'Greeter' && s.kind === 5 && s.location.uri === uri('greet.ts')), JSON.stringify(a.workspaceSymbol));
    assert.deepEqual(a.implementation.map((l) => pos({ uri: l.targetUri ?? l.uri, range: l.targetSelectionRange ?? l.range })), ['greet.ts:5:2']);
    assert.deepEqual(a.typeDefinition.map((l) => pos({ uri: l.targetUri ?? l.uri, range: l.targetSelectionRange ?? l.range })), ['greet.ts:10:17']);
    assert.deepEqual(a.prepareCallHierarchy.map((i) => [i.name, i.kind, pos({ uri: i.uri, range: i.selectionRange })]), [['greet', 12, 'greet.ts:0:16']]);
    assert.deepEqual(a.incomingCalls.map((c) => [c.from.name, c.fromRanges.map((r) => `${r.start.line}:${r.start.character}`)]).sort(),
      [['hello', ['6:11']], ['main.ts', ['2:22', '4:12', '5:20']]]);
    assert.deepEqual(a.outgoingCalls.map((c) => [c.to.name, pos({ uri: c.to.uri, range: c.to.selectionRange })]), [['greet', 'greet.ts:0:16']]);
    assert.deepEqual(a.prepareRename, { range: at('greet.ts', 0, 16, 0, 21).range, placeholder: 'greet' });
    assert.equal(a.prepareRenameNothing?.error?.code, -32803, JSON.stringify(a.prepareRenameNothing));
    assert.deepEqual(Object.keys(a.rename.changes).sort(), [uri('greet.ts'), uri('main.ts')]);
    assert.deepEqual(a.rename.changes[uri('main.ts')].map((e) => [e.range.start.line, e.range.start.character, e.newText]).sort(),
      [[0, 9, 'welcome'], [2, 22, 'welcome'], [4, 12, 'welcome'], [5, 20, 'welcome']]);
    assert.equal(a.unknownMethod.error.code, -32602);
    assert.match(a.unknownMethod.error.message, /^method: textDocument\/completion is not one this client answers/);
    assert.equal(a.badPosition.error.code, -32602);
    assert.match(a.badPosition.error.message, /^params\.position\.line: /);
    assert.equal(fs.readFileSync(path.join(ws, 'src/main.ts'), 'utf8'), MAIN_TS, 'answering a rename edits nothing');
    await page.click('.tabs-container .tab[aria-label*="main.ts"]');
    await until('main.ts in the editor', () => page.$('.tabs-container .tab.active[aria-label*="main.ts"]'));
    assert.match(await editorText(page), /console\.log\(greet\('bob'\)/, 'nor the buffer');
  });

  await check('another program in serverCommand: the panel names what it reports, once, with the fix', async () => {
    const other = path.join(ROOT, 'test/fixtures/not-agent-lsp.py');
    await setServerCommand(other);
    const expected = `${other} is not agent-lsp (it reports "agent-lsp 0.23.5" without the agent protocol). ${INSTALL}`;
    await frame.waitForSelector('#banner[data-state="failed"]', { timeout: LONG });
    assert.equal(await frame.textContent('#banner p'), expected);
    assert.notEqual(await frame.textContent('#status'), 'Working…');
    await page.waitForSelector('.statusbar-item[aria-label="Agent LSP: failed"]', { timeout: LONG });
  });

  await check('a file that is not executable in serverCommand: one clear message', async () => {
    fs.writeFileSync(path.join(ws, 'agent-lsp.txt'), 'not a program\n');
    await setServerCommand('${workspaceFolder}/agent-lsp.txt');
    await frame.waitForSelector('#banner[data-state="failed"] >> text=is not an executable program', { timeout: LONG });
    assert.equal(await frame.textContent('#banner p'), `\${workspaceFolder}/agent-lsp.txt is not an executable program (${path.join(ws, 'agent-lsp.txt')}). ${INSTALL}`);
  });

  await check('a missing server: the panel says what to install within 10 s, with a button to the setting', async () => {
    await setServerCommand('agent-lsp-not-installed');
    const expected = 'agent-lsp was not found (agent-lsp-not-installed). Install it with "pipx install agent-lsp-server" '
      + 'or "uv tool install agent-lsp-server", or set agentLsp.serverCommand to its full path.';
    await frame.waitForSelector('#banner[data-state="missing"]', { timeout: 10_000 });
    assert.equal(await frame.textContent('#banner p'), expected);
    assert.notEqual(await frame.textContent('#status'), 'Working…');
    await page.waitForSelector(`.notifications-toasts .notification-list-item-message >> text=${expected}`, { timeout: LONG });
    await page.screenshot({ path: path.join(OUT, 'e2e-no-server.png') });
    await frame.click('#banner button[data-command="openServerSetting"]');
    await page.waitForSelector('.settings-editor .setting-item-contents[aria-label*="Server Command"], .settings-editor [data-key="agentLsp.serverCommand"]', { timeout: LONG });
  });

  await check('no page errors in the workbench', async () => assert.deepEqual(pageErrors, []));
} catch (e) {
  results.push(['setup', false]);
  console.error(e);
  console.error(cs?.output().slice(-3000));
  await page?.screenshot({ path: path.join(OUT, 'e2e-failure.png') }).catch(() => {});
} finally {
  await browser?.close();
  cs?.proc.kill();
  api?.stop();
}
const passed = results.filter(([, ok]) => ok).length;
for (const [name, ok] of results) if (!ok) console.log(`FAILED: ${name}`);
console.log(`e2e: ${passed} passed, ${results.length - passed} failed${skipped.length ? `, ${skipped.length} skipped` : ''} `
  + `(${((Date.now() - t0) / 1000).toFixed(1)} s)`);
process.exit(passed === results.length && passed > 0 ? 0 : 1);
