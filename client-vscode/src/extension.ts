/**
 * Entry point: wires the chat view, the controller and the language client together, and registers the
 * commands. The server is (re)started here — at activation, after the API key changes, and when
 * agentLsp.serverCommand changes; other settings reach the running server as didChangeConfiguration.
 */
import * as vscode from 'vscode';
import { type LanguageClient, State } from 'vscode-languageclient/node';
import { ChatController } from './chatController';
import { ChatViewProvider, VIEW_ID } from './chatView';
import { startClient } from './languageClient';
import { permissionMode, SECTION, serverSettings } from './settings';

const KEY_SECRET = 'agentLsp.anthropicApiKey';
/** Stops the running server; VS Code waits for it on deactivation so the server exits cleanly. */
let stopServer: () => Promise<void> = async () => {};

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('Agent LSP', { log: true });
  let client: LanguageClient | undefined;

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
    command: (name) => void (name === 'setApiKey' ? setApiKey()
      : vscode.commands.executeCommand('workbench.action.openSettings', `@ext:${context.extension.id}`)),
  }, permissionMode(vscode.workspace.getConfiguration(SECTION)));

  async function restart(): Promise<void> {
    const old = client;
    client = undefined;
    controller.attach(undefined, { state: 'starting' });
    await old?.stop().catch(() => undefined);
    const outcome = await startClient(output, await context.secrets.get(KEY_SECRET));
    if (!outcome.client) {
      controller.attach(undefined, { state: 'failed', message: outcome.message });
      void vscode.window.showErrorMessage(outcome.message, 'Open Settings').then((choice) => {
        if (choice) void controller.handle({ type: 'command', command: 'openSettings' });
      });
      return;
    }
    client = outcome.client;
    const c = outcome.client;
    // A server that dies for good (the client gave up restarting it) must not leave a panel that looks ready.
    c.onDidChangeState(({ newState }) => {
      if (newState === State.Stopped && client === c) {
        controller.setServerState({ state: 'failed', message: 'The agent server stopped. Run "Agent: Restart Server" (its log is in the Agent LSP output).' });
      }
    });
    controller.attach({
      // By method name: LanguageClient's generic overloads do not infer through AgentConnection's generics.
      sendRequest: (type, params) => c.sendRequest(type.method, params),
      onNotification: (type, handler) => c.onNotification(type, handler),
    }, { state: 'ready' });
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

  context.subscriptions.push(
    output,
    vscode.window.registerWebviewViewProvider(VIEW_ID, view, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.commands.registerCommand('agentLsp.openChat', () => vscode.commands.executeCommand(`${VIEW_ID}.focus`)),
    vscode.commands.registerCommand('agentLsp.newSession', () => controller.newSession()),
    vscode.commands.registerCommand('agentLsp.stop', () => controller.stop()),
    vscode.commands.registerCommand('agentLsp.setApiKey', setApiKey),
    vscode.commands.registerCommand('agentLsp.restartServer', restart),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration(SECTION)) return;
      if (e.affectsConfiguration(`${SECTION}.serverCommand`)) return void restart();
      void client?.sendNotification('workspace/didChangeConfiguration', {
        settings: { [SECTION]: serverSettings(vscode.workspace.getConfiguration(SECTION)) },
      });
    }),
  );
  stopServer = async () => { await client?.stop(); };
  await restart();
}

export function deactivate(): Promise<void> {
  return stopServer();
}
