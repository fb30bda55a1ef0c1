/**
 * Entry point: wires the chat view, the controller and the language client together, registers the commands,
 * and runs the connection's state machine (starting → ready | missing | failed; ready → crashed → restarting).
 * The server is (re)started here — at activation, after the API key changes, when agentLsp.serverCommand or
 * serverArgs change, and on Restart; other settings reach the running server as didChangeConfiguration.
 */
import * as vscode from 'vscode';
import { type LanguageClient, State } from 'vscode-languageclient/node';
import { ChatController } from './chatController';
import { ChatViewProvider, VIEW_ID } from './chatView';
import { type StderrTail, startClient } from './languageClient';
import type { ServerState } from './messages';
import { pickImages } from './imageFiles';
import { mentionChoices } from './mentions';
import { permissionMode, SECTION, serverSettings } from './settings';
import { CompletionStatsRequest, MemoryFileRequest } from './protocol';
import { DISMISS, JUMP_OR_APPLY, NEXT_EDITS_ENABLED_KEY, nextEditLook, TOGGLE_NEXT_EDITS } from './nextEdits';
import { NextEditsEditor } from './nextEditsEditor';
import { type IndexStatus, statusLook } from './statusItem';
import { ENABLED_KEY, enabledIn, STATS_COMMAND, statsMessage, Suggestions, TOGGLE_COMMAND, toggleTarget } from './suggestions';

const KEY_SECRET = 'agentLsp.anthropicApiKey';
/** Stops the running server; VS Code waits for it on deactivation so the server exits cleanly. */
let stopServer: () => Promise<void> = async () => {};

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('Agent LSP', { log: true });
  let client: LanguageClient | undefined;
  let stderr: StderrTail | undefined;
  const status = vscode.window.createStatusBarItem('agentLsp.status', vscode.StatusBarAlignment.Right, 100);
  status.name = 'Agent LSP';
  status.command = 'agentLsp.openChat';
  // Suggestions as you type: on / off / working, shown while a server that offers them runs; a click toggles.
  const suggestStatus = vscode.window.createStatusBarItem('agentLsp.suggestions', vscode.StatusBarAlignment.Right, 99);
  suggestStatus.name = 'Agent Suggestions';
  suggestStatus.command = TOGGLE_COMMAND;
  const suggestions = new Suggestions(enabledIn(vscode.workspace.getConfiguration(SECTION)), (look) => {
    if (!look) return void suggestStatus.hide();
    suggestStatus.text = look.text;
    suggestStatus.tooltip = look.tooltip;
    suggestStatus.accessibilityInformation = { label: look.label };
    suggestStatus.show();
  });

  // Next-edit suggestions: their own item (on / off / working), shown while a server that offers them runs.
  const nextStatus = vscode.window.createStatusBarItem('agentLsp.nextEdits', vscode.StatusBarAlignment.Right, 98);
  nextStatus.name = 'Agent Next Edits';
  nextStatus.command = TOGGLE_NEXT_EDITS;
  const nextEdits = new NextEditsEditor(nextEditsEnabled(), context.extensionUri, (state) => {
    if (!state.visible) return void nextStatus.hide();
    const look = nextEditLook(state.state);
    nextStatus.text = look.text;
    nextStatus.tooltip = look.tooltip;
    nextStatus.accessibilityInformation = { label: look.label };
    nextStatus.show();
  });

  const view: ChatViewProvider = new ChatViewProvider(context.extensionUri, (m) => void controller.handle(m));
  const controller = new ChatController({
    post: (m) => view.post(m),
    reveal: () => view.reveal(),
    context: () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) return undefined;
      const s = editor.selection;
      return {
        activeUri: editor.document.uri.toString(),
        ...(s.isEmpty ? {} : { selection: {
          start: { line: s.start.line, character: s.start.character },
          end: { line: s.end.line, character: s.end.character },
        } }),
      };
    },
    command: (name) => {
      if (name === 'setApiKey') return void setApiKey();
      if (name === 'restart') return void restart();
      const query = name === 'openServerSetting' ? `${SECTION}.serverCommand` : `@ext:${context.extension.id}`;
      void vscode.commands.executeCommand('workbench.action.openSettings', query);
    },
    workspace: () => vscode.workspace.workspaceFolders?.[0]?.uri.toString(),
    stderr: () => stderr?.lines() ?? '',
    copy: (text) => void vscode.env.clipboard.writeText(text),
    insert: (text) => {
      const editor = vscode.window.visibleTextEditors.find((e) => e === vscode.window.activeTextEditor)
        ?? vscode.window.visibleTextEditors[0];
      if (!editor) return void vscode.window.showInformationMessage('Open an editor to insert the code into.');
      void editor.edit((b) => editor.selections.forEach((s) => b.replace(s, text)));
    },
    mentionChoices,
    pickImages: (uris) => pickImages(uris?.map((u) => vscode.Uri.parse(u))),
    index: (said) => { index = said; show(shown); },
  }, permissionMode(vscode.workspace.getConfiguration(SECTION)));

  let shown: ServerState = { state: 'starting' };
  /** The index status of the agent's last language answer; forgotten when the server (re)starts. */
  let index: IndexStatus | undefined;
  function show(server: ServerState): void {
    if (server.state !== 'ready') index = undefined;
    shown = server;
    const look = statusLook(server, index);
    status.text = look.text;
    status.tooltip = look.tooltip;
    status.accessibilityInformation = { label: look.label };
    status.show();
  }

  /** (Re)starts the server, one start at a time (settings can change twice in a row). */
  let starts = Promise.resolve();
  function restart(): Promise<void> {
    starts = starts.then(start, start);
    return starts;
  }

  /** Starts the server; `restarting` when one ran or failed before. */
  async function start(): Promise<void> {
    const old = client;
    client = undefined;
    const first: ServerState = old || stderr ? { state: 'restarting' } : { state: 'starting' };
    show(first);
    suggestions.setAvailable(false);
    nextEdits.connect(undefined);
    controller.attach(undefined, first);
    await old?.stop(2000).catch(() => undefined);
    const outcome = await startClient(output, await context.secrets.get(KEY_SECRET),
      (command, args, run) => controller.external(commandTitle(command, args), run), context.extensionPath, suggestions,
      nextEdits);
    if (!outcome.client) {
      show(outcome.server);
      controller.attach(undefined, outcome.server);
      // One notification, with the action that fixes it; no retry loop.
      void vscode.window.showErrorMessage(outcome.server.message, 'Open Setting').then((choice) => {
        if (choice) controller.handle({ type: 'command', command: 'openServerSetting' });
      });
      return;
    }
    client = outcome.client;
    stderr = outcome.stderr;
    const c = outcome.client;
    const tail = outcome.stderr;
    // The server died (the client does not restart it): the panel says so, with its last words and Restart.
    c.onDidChangeState(({ newState }) => {
      if (newState !== State.Stopped || client !== c) return;
      client = undefined;
      const lines = tail.lines();
      const crashed: ServerState = {
        state: 'crashed', message: 'The agent server stopped. Restart it to go on; your sessions are kept.',
        ...(lines ? { details: lines } : {}),
      };
      output.error(`the server stopped${lines ? `; its last output:\n${lines}` : ''}`);
      show(crashed);
      suggestions.setAvailable(false);
      nextEdits.connect(undefined);
      controller.attach(undefined, crashed);  // nothing more goes to the dead client ("Client is not running")
    });
    const ready: ServerState = { state: 'ready', features: outcome.features };
    show(ready);
    suggestions.setAvailable(outcome.features.includes('inlineCompletion'));
    nextEdits.connect(outcome.features.includes('nextEdits') ? {
      request: (method, params, token) => c.sendRequest(method, params, token),
      notify: (method, params) => void c.sendNotification(method, params),
    } : undefined);
    if (!nextEditsEnabled()) sendNextEditsEnabled(c, false);
    controller.attach({
      // By method name: LanguageClient's generic overloads do not infer through AgentConnection's generics.
      sendRequest: (type, params) => c.sendRequest(type.method, params),
      onNotification: (type, handler) => c.onNotification(type, handler),
    }, ready);
  }

  async function setApiKey(): Promise<void> {
    const key = await vscode.window.showInputBox({
      title: 'Anthropic API key', prompt: 'Stored in VS Code\'s secret storage and given to the agent server as ANTHROPIC_API_KEY. Leave empty to remove it.',
      password: true, ignoreFocusOut: true,
    });
    if (key === undefined) return;
    if (key.trim()) await context.secrets.store(KEY_SECRET, key.trim());
    else await context.secrets.delete(KEY_SECRET);
    await restart();
  }

  /** Agent: Toggle Suggestions — the state lives in agentLsp.completions.enabled (the server gets it too). */
  async function toggleCompletions(): Promise<void> {
    const config = vscode.workspace.getConfiguration(SECTION);
    const target = toggleTarget(config.inspect(ENABLED_KEY)) === 'workspace'
      ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
    await config.update(ENABLED_KEY, !enabledIn(config), target);
  }

  /** Agent: Toggle Next-Edit Suggestions — the state lives in agentLsp.nextEdits.enabled. */
  async function toggleNextEdits(): Promise<void> {
    const config = vscode.workspace.getConfiguration(SECTION);
    const target = toggleTarget(config.inspect(NEXT_EDITS_ENABLED_KEY)) === 'workspace'
      ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
    await config.update(NEXT_EDITS_ENABLED_KEY, !nextEditsEnabled(), target);
  }

  context.subscriptions.push(
    output, status, suggestStatus, nextStatus, nextEdits,
    vscode.window.registerWebviewViewProvider(VIEW_ID, view, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.commands.registerCommand('agentLsp.openChat', () => vscode.commands.executeCommand(`${VIEW_ID}.focus`)),
    vscode.commands.registerCommand('agentLsp.newSession', () => controller.newSession()),
    vscode.commands.registerCommand('agentLsp.stop', () => controller.stop()),
    vscode.commands.registerCommand('agentLsp.setApiKey', setApiKey),
    vscode.commands.registerCommand('agentLsp.restartServer', restart),
    vscode.commands.registerCommand('agentLsp.openMemory', () => openMemory(client)),
    vscode.commands.registerCommand(TOGGLE_COMMAND, toggleCompletions),
    vscode.commands.registerCommand(TOGGLE_NEXT_EDITS, toggleNextEdits),
    vscode.commands.registerCommand(JUMP_OR_APPLY, () => nextEdits.jumpOrApply()),
    vscode.commands.registerCommand(DISMISS, () => nextEdits.dismiss()),
    vscode.commands.registerCommand(STATS_COMMAND, async () => {
      if (!client) return void vscode.window.showInformationMessage('The agent server is not running.');
      try {
        void vscode.window.showInformationMessage(statsMessage(await client.sendRequest(CompletionStatsRequest, {})));
      } catch (e) {
        void vscode.window.showWarningMessage(`agent/completionStats failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }),
    // From the explorer (the files selected) or the palette (a file dialog).
    vscode.commands.registerCommand('agentLsp.attachImage', async (uri?: vscode.Uri, selected?: vscode.Uri[]) => {
      await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
      const picked = await pickImages(selected?.length ? selected : uri instanceof vscode.Uri ? [uri] : undefined);
      controller.attachImages(picked);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration(SECTION)) return;
      suggestions.setEnabled(enabledIn(vscode.workspace.getConfiguration(SECTION)));
      if (e.affectsConfiguration(`${SECTION}.${NEXT_EDITS_ENABLED_KEY}`)) {
        nextEdits.state.setEnabled(nextEditsEnabled());
        if (client) sendNextEditsEnabled(client, nextEditsEnabled());
      }
      if (e.affectsConfiguration(`${SECTION}.serverCommand`) || e.affectsConfiguration(`${SECTION}.serverArgs`)) {
        return void restart();
      }
      const { settings, warnings } = serverSettings(vscode.workspace.getConfiguration(SECTION));
      for (const w of warnings) void vscode.window.showWarningMessage(w);
      void client?.sendNotification('workspace/didChangeConfiguration', { settings: { [SECTION]: settings } });
    }),
  );
  stopServer = async () => { const c = client; client = undefined; await c?.stop(2000); };
  void restart();  // activation does not wait for the server: the status bar and panel show its state
}

/** Whether next-edit suggestions are on: `agentLsp.nextEdits.enabled` unless it is `false`. */
function nextEditsEnabled(): boolean {
  return vscode.workspace.getConfiguration(SECTION).get<unknown>(NEXT_EDITS_ENABLED_KEY) !== false;
}

/** Tells the server whether next edits are on, the way Copilot's clients do (PROTOCOL §11), so a server that
 * is asked by no one also knows. */
function sendNextEditsEnabled(client: LanguageClient, enabled: boolean): void {
  void client.sendNotification('workspace/didChangeConfiguration', { settings: { nextEditSuggestions: { enabled } } });
}

/** The user message a code action's command shows in the panel, e.g. "Fix with agent: Property expected". */
export function commandTitle(command: string, args: unknown[]): string {
  const arg = (args[0] ?? {}) as { diagnostics?: { message?: string }[]; instruction?: string };
  const what = { 'agent.fix': 'Fix with agent', 'agent.explain': 'Explain with agent', 'agent.refactor': 'Refactor with agent' }[command] ?? command;
  const detail = arg.diagnostics?.map((d) => d.message).filter(Boolean).join('; ') || arg.instruction;
  return detail ? `${what}: ${detail}` : what;
}

/** Agent: Open Project Memory — the file the server's `agent/memoryFile` names (the memoryFile setting in force
 * decides: AGENTS.md of the first folder, or the private file in the data directory). */
async function openMemory(client: LanguageClient | undefined): Promise<void> {
  if (!vscode.workspace.workspaceFolders?.length) {
    return void vscode.window.showInformationMessage('Open a folder: the project memory belongs to a workspace.');
  }
  if (!client) return void vscode.window.showInformationMessage('The agent server is not running.');
  let where;
  try {
    where = await client.sendRequest(MemoryFileRequest, {});
  } catch (e) {
    return void vscode.window.showWarningMessage(`agent/memoryFile failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!where.uri) return void vscode.window.showInformationMessage('This project has no memory file (no data directory).');
  const uri = vscode.Uri.parse(where.uri);
  if (where.private) {
    try {
      await vscode.workspace.fs.stat(uri);
      return void await vscode.window.showTextDocument(uri);
    } catch {
      return void vscode.window.showInformationMessage(`This project's memory is private (memoryFile "private"): `
        + `${uri.fsPath} does not exist yet; the agent's remember tool creates it.`);
    }
  }
  try {
    await vscode.workspace.fs.stat(uri);
    await vscode.window.showTextDocument(uri);
  } catch {
    // Not there yet: an unsaved AGENTS.md with the section the agent's `remember` writes to.
    const doc = await vscode.workspace.openTextDocument(uri.with({ scheme: 'untitled' }));
    const editor = await vscode.window.showTextDocument(doc);
    await editor.edit((b) => b.insert(new vscode.Position(0, 0), '## Memory\n\n'));
  }
}

export function deactivate(): Promise<void> {
  return stopServer();
}
