// Test helpers: the fake Messages API and the real agent-lsp server over stdio, driven with vscode-jsonrpc
// (the transport under vscode-languageclient). Used by the contract test and the end-to-end test.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as rpc from 'vscode-jsonrpc/node';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const PYTHON = process.env.PYTHON ?? 'python3';
/** The agent-lsp under test: ci.sh passes its absolute path (an editor's shell may not have the venv on PATH). */
export const AGENT_LSP = process.env.AGENT_LSP ?? 'agent-lsp';

/** Starts tests/fakes/messages_api.py (`-m`, from the repository) with `script`; resolves once it printed its base URL. */
export async function startFakeApi(script, dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-lsp-api-'))) {
  const scriptFile = path.join(dir, 'script.json');
  const recordFile = path.join(dir, 'requests.json');
  fs.writeFileSync(scriptFile, JSON.stringify(script));
  const proc = spawn(PYTHON, ['-m', 'tests.fakes.messages_api', scriptFile, '--record', recordFile],
    { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`fake Messages API exited with ${code}`)));
    readline.createInterface({ input: proc.stdout }).once('line', resolve);
  });
  return {
    url,
    /** The request bodies the model received, in order. */
    requests: () => (fs.existsSync(recordFile) ? JSON.parse(fs.readFileSync(recordFile, 'utf8')) : []),
    stop: () => proc.kill(),
  };
}

/** The environment that points the server's real anthropic SDK at the fake API, and nowhere else. */
export function serverEnv(apiUrl) {
  return { ...process.env, ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: apiUrl, AGENT_LSP_OFFLINE: '1' };
}

/**
 * Starts `agent-lsp` on a fresh data directory and initializes it as VS Code would, declaring
 * experimental.agent. Collects every agent/update; `handlers` answer the server's requests.
 * `dataDir`: the store to use (default: a fresh one).
 */
export async function startServer(apiUrl, { workspace, handlers = {}, dataDir, agent = {} } = {}) {
  dataDir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'agent-lsp-data-'));
  const proc = spawn(AGENT_LSP, ['--data-dir', dataDir], { env: serverEnv(apiUrl), stdio: ['pipe', 'pipe', 'inherit'] });
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
  const updates = [];
  const messages = [];
  conn.onNotification('agent/update', (p) => updates.push(p));
  conn.onNotification('window/showMessage', (p) => messages.push(p));
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onNotification('$/progress', () => {});
  conn.onRequest('workspace/configuration', (p) => p.items.map(() => ({})));
  conn.onRequest('agent/diagnostics', () => ({ items: [] }));  // we declared it; a test may answer otherwise
  for (const [method, handler] of Object.entries(handlers)) conn.onRequest(method, handler);
  conn.listen();
  const rootUri = `file://${workspace}`;
  const init = await conn.sendRequest('initialize', {
    processId: process.pid, rootUri, workspaceFolders: [{ uri: rootUri, name: 'ws' }],
    capabilities: {
      workspace: { applyEdit: true, configuration: true, workspaceEdit: { documentChanges: true, resourceOperations: ['create'] } },
      window: { workDoneProgress: true },
      experimental: { agent: { confirmTool: true, diagnostics: true, ...agent } },
    },
  });
  await conn.sendNotification('initialized', {});
  const exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
  return {
    conn, init, updates, messages,
    /** shutdown + exit; resolves to the server's exit code. */
    async stop() {
      await conn.sendRequest('shutdown');
      await conn.sendNotification('exit');
      const code = await exited;
      conn.dispose();
      return code;
    },
  };
}

/** "kind" or "tool_call_update:status" of each update, the shape tests compare as a whole. Consecutive text
 * (or thinking) deltas count as one: the server coalesces them by time (≤ 20 ms), so their number varies. */
export function shape(updates) {
  const kinds = updates.map(({ update: u }) => (u.kind === 'tool_call_update' ? `${u.kind}:${u.status}` : u.kind));
  return kinds.filter((k, i) => !(k.endsWith('_delta') && kinds[i - 1] === k));
}

export async function until(predicate, what, timeoutMs = 60000) {
  const end = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
