// The release .vsix as a new user gets it, following docs/install.md's VS Code steps as written: its
// `vscode-install` block run by bash in the folder holding the .vsix (`code` there is code-server's CLI), no
// agent-lsp on PATH, no agentLsp.serverCommand, no key, no model setting and no model API (AGENT_LSP_OFFLINE=1): the
// extension starts the server it carries (bundled/libs) with python3 from PATH, the panel connects, its model
// picker offers the offline demo model (the server's default needs a key), and the page's first question, asked
// of the model picked there, is answered. Prints the time from "I have the .vsix" (its install starts) to the
// first answer.
// Run: AGENT_LSP_VSIX=<dist/agent-lsp-vscode-V-linux-x64.vsix> CODE_SERVER_DIR=<install dir> node test/e2e-bundled.mjs
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from './chromium.mjs';

const VSIX = process.env.AGENT_LSP_VSIX;
const CODE_SERVER = path.join(process.env.CODE_SERVER_DIR ?? path.join(os.homedir(), '.cache/agent-lsp-code-server'),
  'node_modules/.bin/code-server');
const LONG = 120_000;  // a ceiling for a wait on a loaded machine (the first start imports the bundled SDKs)
const PATH_WITHOUT_AGENT_LSP = '/usr/bin:/bin';
const INSTALL_DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/install.md');
const QUESTION = 'What does app.py do?';  // docs/install.md's first chat

/** docs/install.md's fenced block named `name` (```lang name), unindented. */
function docBlock(name) {
  const found = fs.readFileSync(INSTALL_DOC, 'utf8').match(new RegExp(`^([ \\t]*)\`\`\`\\w+ ${name}\\n([\\s\\S]*?)^\\1\`\`\`$`, 'm'));
  assert.ok(found, `docs/install.md has a block named ${name}`);
  return found[2].split('\n').map((line) => line.slice(found[1].length)).join('\n');
}

const t0 = Date.now();
const log = (msg) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);

async function until(what, predicate, timeoutMs = LONG) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function freePort() {
  const srv = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

async function runCommand(page, title) {
  await page.click('.editor-group-container');  // the workbench, not the webview, gets F1
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget .quick-input-box input', { timeout: LONG });
  await page.keyboard.type(title);
  await page.click(`.quick-input-list .monaco-list-row[aria-label*="${title}"]`, { timeout: LONG });
}

let cs, browser, page, frame, ok = false;
let output = '';
try {
  assert.ok(VSIX && fs.existsSync(VSIX), `AGENT_LSP_VSIX must name the release .vsix (got ${VSIX})`);
  for (const dir of PATH_WITHOUT_AGENT_LSP.split(':')) {
    assert.ok(!fs.existsSync(path.join(dir, 'agent-lsp')), `${dir}/agent-lsp exists: the test needs it absent`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-lsp-bundled-'));
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, 'app.py'), 'def greet(name):\n    # TODO: say hello\n    return "hi " + name\n');
  fs.mkdirSync(path.join(dir, 'ud/User'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'ud/User/settings.json'), JSON.stringify({
    'workbench.startupEditor': 'none', 'workbench.tips.enabled': false, 'security.workspace.trust.enabled': false,
    'extensions.autoCheckUpdates': false, 'extensions.autoUpdate': false, 'telemetry.telemetryLevel': 'off',
    'update.mode': 'none', 'workbench.enableExperiments': false, 'chat.commandCenter.enabled': false,
  }));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) =>
    !/^(ANTHROPIC_|OPENAI_|AGENT_LSP_|VIRTUAL_ENV$|PYTHONPATH$)/.test(k)));
  Object.assign(env, {
    PATH: PATH_WITHOUT_AGENT_LSP, AGENT_LSP_OFFLINE: '1', HOME: dir,
    XDG_CONFIG_HOME: path.join(dir, 'xdg'), XDG_DATA_HOME: path.join(dir, 'xdg-data'), XDG_STATE_HOME: path.join(dir, 'state'),
  });
  // `code` of the page's block: code-server's CLI, with this test's extensions and user data folders.
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'code'), `#!/bin/sh\nexec '${process.execPath}' '${fs.realpathSync(path.join(path.dirname(CODE_SERVER), 'code-server'))}' `
    + `--extensions-dir '${path.join(dir, 'ext')}' --user-data-dir '${path.join(dir, 'ud')}' "$@"\n`, { mode: 0o755 });
  const install = docBlock('vscode-install');
  assert.ok(install.includes(path.basename(VSIX)), `the page's block installs ${path.basename(VSIX)}: ${install}`);
  const installStarted = Date.now();
  execFileSync('bash', ['-euc', install], { cwd: path.dirname(VSIX), stdio: 'pipe', env: { ...env, PATH: `${bin}:${env.PATH}` } });
  assert.ok(fs.readdirSync(path.join(dir, 'ext')).some((e) => e.startsWith('agent-lsp.agent-lsp-')), 'the extension is installed');
  log(`vsix installed (${(fs.statSync(VSIX).size / 1e6).toFixed(1)} MB)`);

  const port = await freePort();
  cs = spawn(process.execPath, [fs.realpathSync(path.join(path.dirname(CODE_SERVER), 'code-server')),
    '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
    '--disable-workspace-trust', '--disable-getting-started-override',
    '--extensions-dir', path.join(dir, 'ext'), '--user-data-dir', path.join(dir, 'ud'), ws],
  { env, stdio: ['ignore', 'pipe', 'pipe'] });
  cs.stdout.on('data', (d) => { output += d; });
  cs.stderr.on('data', (d) => { output += d; });
  await until('code-server to listen', () => output.includes('HTTP server listening'));

  browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
  page = await (await browser.newContext({ viewport: { width: 1400, height: 860 } })).newPage();
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: LONG });
  await page.waitForSelector('.statusbar-item[aria-label="Agent LSP: ready"]', { timeout: LONG });
  log('the bundled server is ready');

  await until('the explorer', () => page.$('.explorer-folders-view .monaco-list-row[aria-label*="app.py"]'));
  await page.click('.explorer-folders-view .monaco-list-row[aria-label*="app.py"]');
  await runCommand(page, 'Agent: Open Chat');
  frame = await until('the Agent chat webview', async () => {
    for (const f of page.frames()) {
      if (f.url().includes('fake.html') && await f.$('#prompt').catch(() => null)) return f;
    }
    return undefined;
  });
  await frame.waitForSelector('.welcome', { timeout: LONG });
  await until('the panel to connect', async () => await frame.isHidden('#banner') && (await frame.textContent('#status')) === '');
  log('the panel is connected');
  // The model picker: with no key there is no provider, and the offline demo is what it offers, nothing chosen yet
  // (its title says why); picked, the chat below uses it (unpicked, the chat would answer that no provider is set).
  await frame.waitForSelector('#model:not([hidden]) option[value="demo"]', { state: 'attached', timeout: LONG });
  assert.deepEqual(await frame.$$eval('#model option', (os) => os.map((o) => [o.value, o.textContent])),
    [['demo', 'demo (offline, no key)']]);
  assert.equal(await frame.inputValue('#model'), '');
  assert.match(await frame.getAttribute('#model', 'title'), /No model provider is configured\. Set ANTHROPIC_API_KEY/);
  await frame.selectOption('#model', 'demo');
  await frame.fill('#prompt', QUESTION);
  await frame.press('#prompt', 'Enter');
  await frame.waitForSelector('.msg.user', { timeout: LONG });
  await frame.waitForSelector('.result', { timeout: LONG });
  const seconds = (Date.now() - installStarted) / 1000;
  assert.equal(await frame.getAttribute('.result', 'class'), 'result end_turn');
  const answer = await frame.$$eval('.msg.assistant .markdown', (ns) => ns.map((n) => n.textContent).join('\n'));
  assert.match(answer, /greet/, `the demo model answered from app.py: ${answer}`);
  log(`first demo answer ${seconds.toFixed(1)} s after the .vsix install started`);
  ok = true;
} catch (e) {
  console.error(e);
  console.error(output.slice(-3000));
  console.error('panel:', await frame?.evaluate(() => document.body.innerText).catch(() => ''));
  await page?.screenshot({ path: 'test-results/e2e-bundled-failure.png' }).catch(() => {});
} finally {
  await browser?.close();
  cs?.kill();
}
console.log(`e2e-bundled: ${ok ? 1 : 0} passed, ${ok ? 0 : 1} failed (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
process.exit(ok ? 0 : 1);
