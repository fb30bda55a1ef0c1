/**
 * Starts the agent-lsp server through vscode-languageclient, which brings for free: document sync of every
 * scheme, workspace/applyEdit into buffers (with undo), $/progress in the status bar, tracing. This file adds
 * what is agent-specific: the experimental.agent capabilities, the settings the server reads, the API key in
 * the server's environment, the agent/diagnostics answer, and a clear message when the server is missing.
 */
import * as vscode from 'vscode';
import {
  type ClientCapabilities, type FeatureState, LanguageClient, type LanguageClientOptions, type ServerOptions,
  type StaticFeature,
} from 'vscode-languageclient/node';
import { collectDiagnostics } from './diagnostics';
import { type ClientAgentCapabilities, DiagnosticsRequest } from './protocol';
import { findExecutable, INSTALL_HINT, SECTION, serverArgv, serverSettings } from './settings';

/** Declares capabilities.experimental.agent in initialize: we show confirmations and answer diagnostics. */
class AgentCapabilitiesFeature implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const agent: ClientAgentCapabilities = { confirmTool: true, diagnostics: true };
    capabilities.experimental = { ...(capabilities.experimental as object | undefined), agent };
  }
  initialize(): void {}
  getState(): FeatureState { return { kind: 'static' }; }
  clear(): void {}
}

export type StartOutcome = { client: LanguageClient } | { client?: undefined; message: string };

/** Starts a client, or says in one sentence why it could not (missing program, crash on start). */
export async function startClient(output: vscode.LogOutputChannel, apiKey: string | undefined): Promise<StartOutcome> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const [command, ...args] = serverArgv(config);
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!findExecutable(command, process.env.PATH, cwd)) {
    return { message: `The agent server "${command}" was not found. ${INSTALL_HINT}` };
  }
  // The key from SecretStorage wins over the environment VS Code was started from; without one the server
  // still finds ANTHROPIC_API_KEY there, or answers a chat with a clear initialization_failed error.
  const env = { ...process.env, ...(apiKey ? { ANTHROPIC_API_KEY: apiKey } : {}) };
  const serverOptions: ServerOptions = { command, args, options: { env, cwd } };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    initializationOptions: serverSettings(config),
    outputChannel: output,
    // workspace/configuration gets the server's own keys only (the raw section has serverCommand, trace…).
    middleware: {
      workspace: {
        configuration: (params, token, next) => params.items.every((item) => item.section === SECTION)
          ? params.items.map(() => serverSettings(vscode.workspace.getConfiguration(SECTION)))
          : next(params, token),
      },
    },
  };
  const client = new LanguageClient('agentLsp', 'Agent LSP', serverOptions, clientOptions);
  client.registerFeature(new AgentCapabilitiesFeature());
  client.onRequest(DiagnosticsRequest, (params) => collectDiagnostics(params));
  try {
    await client.start();
    return { client };
  } catch (e) {
    await client.dispose().catch(() => undefined);
    const reason = e instanceof Error ? e.message : String(e);
    return { message: `The agent server "${[command, ...args].join(' ')}" failed to start (${reason}). ${INSTALL_HINT}` };
  }
}
