/**
 * Starts the agent-lsp server through vscode-languageclient, which brings for free: document sync of every
 * scheme, workspace/applyEdit into buffers (with undo), $/progress in the status bar, tracing. This file adds
 * what is agent-specific: the experimental.agent capabilities, the settings the server reads, the API key in
 * the server's environment, the agent/diagnostics answer, and the checks that make a wrong setup one clear
 * message: a missing or non-executable program, a program that is not agent-lsp (serverInfo and protocol
 * version), a server that dies — never the client's own retry loop.
 */
import { spawn } from 'node:child_process';
import * as vscode from 'vscode';
import {
  type ClientCapabilities, CloseAction, ErrorAction, type FeatureState, LanguageClient, type LanguageClientOptions,
  RevealOutputChannelOn, type ServerOptions, type StaticFeature,
} from 'vscode-languageclient/node';
import { chooseServer, type PythonExtensionApi, pythonCandidates } from './bundled';
import { collectDiagnostics } from './diagnostics';
import { answerLanguageFeature, OwnProviders } from './languageFeatures';
import type { ServerState } from './messages';
import { type ClientAgentCapabilities, DiagnosticsRequest, LanguageFeatureRequest } from './protocol';
import { identify, messages, SECTION, serverProgram, serverSettings } from './settings';
import { NEXT_EDIT_ACCEPTED } from './nextEdits';
import type { NextEditsEditor } from './nextEditsEditor';
import { COMPLETION_ACCEPTED, type Suggestions } from './suggestions';

/** Declares capabilities.experimental.agent in initialize: we show confirmations, answer diagnostics, and answer
 * agent/languageFeature from VS Code's other language providers — every method the server lists in its
 * `languageMethods` (`languageFeatures: true`), so no list of them is kept here. */
class AgentCapabilitiesFeature implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const agent: ClientAgentCapabilities = { confirmTool: true, diagnostics: true, languageFeatures: true };
    capabilities.experimental = { ...(capabilities.experimental as object | undefined), agent };
  }
  initialize(): void {}
  getState(): FeatureState { return { kind: 'static' }; }
  clear(): void {}
}

/** The last lines the server wrote to stderr, to show when it dies. */
export class StderrTail {
  private text = '';
  push(chunk: string): void { this.text = (this.text + chunk).slice(-8000); }
  lines(n = 12): string { return this.text.trimEnd().split('\n').slice(-n).join('\n'); }
}

/** How long a program may take to answer initialize before we say it is not answering (a loaded machine
 * starts Python slowly; a program that is not a language server never answers). */
const INITIALIZE_TIMEOUT_MS = 60_000;

export type StartOutcome =
  | { client: LanguageClient; features: string[]; stderr: StderrTail }
  | { client?: undefined; server: Extract<ServerState, { state: 'missing' | 'failed' }> };

/** Starts a client, or says in one message why it could not and what fixes it. */
/** Runs an `agent.*` command (a code action's) so the panel shows its chat; `run` sends it to the server. */
export type AgentCommandRunner = (command: string, args: unknown[], run: () => Promise<unknown>) => Promise<unknown>;

export async function startClient(output: vscode.LogOutputChannel, apiKey: string | undefined,
  agentCommand?: AgentCommandRunner, extensionPath?: string, suggestions?: Suggestions,
  nextEdits?: NextEditsEditor): Promise<StartOutcome> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const found = await chooseServer(serverProgram(config, cwd), extensionPath, async () => pythonCandidates(await pythonApi()));
  if (found.kind === 'noPython') return { server: { state: 'missing', message: found.message } };
  if (found.kind !== 'found') {
    return { server: found.kind === 'missing' ? { state: 'missing', message: messages.missing(found.command) }
      : { state: 'failed', message: messages.notExecutable(found.command, found.program ?? found.command) } };
  }
  const { settings, warnings } = serverSettings(config);
  for (const w of warnings) {
    output.warn(w);
    void vscode.window.showWarningMessage(w);
  }
  // The key from SecretStorage wins over the environment VS Code was started from; without one the server
  // still finds ANTHROPIC_API_KEY there, or answers a chat with a clear initialization_failed error.
  const env = { ...process.env, ...found.env, ...(apiKey ? { ANTHROPIC_API_KEY: apiKey } : {}) };
  const stderr = new StderrTail();
  const own = new OwnProviders();
  output.info(`starting ${[found.program, ...found.args].join(' ')}`);
  // Spawned here (not by the client) to keep the last stderr lines for the panel; the client still copies
  // stderr into the output channel.
  const { program, args } = found;
  const serverOptions: ServerOptions = async () => {
    const proc = spawn(program, args, { cwd, env, stdio: 'pipe' });
    proc.stderr.on('data', (d: Buffer) => stderr.push(d.toString()));
    return proc;
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    initializationOptions: settings,
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    // The panel says what happened and offers Restart; the client's own restarts would only repeat a crash.
    initializationFailedHandler: () => false,
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue, handled: true }),
      closed: () => ({ action: CloseAction.DoNotRestart, handled: true }),
    },
    // workspace/configuration gets the server's own keys only (the raw section has serverCommand, trace…).
    middleware: {
      // agent-lsp's own providers (its hover) stay out of the answers to agent/languageFeature.
      ...own.middleware(),
      // Suggestions as you type: the status bar's working state; nothing asked while they are off; never
      // beside a next edit shown in the same document.
      ...(suggestions ? { provideInlineCompletionItems: (document, position, context, token, next) => {
        const provide = () => suggestions.provideInlineCompletionItems(document, position, context, token, next);
        return nextEdits ? nextEdits.wrapInlineCompletions(document, provide) : provide();
      } } : {}),
      // A code action's agent.* command runs a chat: the panel shows it like one it started (an accepted
      // suggestion's or next edit's command only tells the server).
      executeCommand: (command, args, next) => command.startsWith('agent.') && command !== COMPLETION_ACCEPTED
        && command !== NEXT_EDIT_ACCEPTED && agentCommand
        ? agentCommand(command, args, () => Promise.resolve(next(command, args)))
        : next(command, args),
      workspace: {
        configuration: (params, token, next) => params.items.every((item) => item.section === SECTION)
          ? params.items.map(() => serverSettings(vscode.workspace.getConfiguration(SECTION)).settings)
          : next(params, token),
      },
    },
  };
  const client = new LanguageClient('agentLsp', 'Agent LSP', serverOptions, clientOptions);
  client.registerFeature(new AgentCapabilitiesFeature());
  client.onRequest(DiagnosticsRequest, (params) => collectDiagnostics(params));
  client.onRequest(LanguageFeatureRequest, (params, token) => answerLanguageFeature(params, own, token));
  const shown = [found.command, ...found.args].join(' ');
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([client.start(), new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer to initialize in ${INITIALIZE_TIMEOUT_MS / 1000} s`)), INITIALIZE_TIMEOUT_MS);
    })]);
  } catch (e) {
    await client.dispose(2000).catch(() => undefined);
    const reason = e instanceof Error ? e.message : String(e);
    const tail = stderr.lines();
    output.error(`${shown} failed to start: ${reason}`);
    return { server: {
      state: 'failed', message: messages.failedToStart(shown, reason),
      ...(tail ? { details: tail } : {}),
    } };
  } finally {
    clearTimeout(timer);
  }
  const who = identify(client.initializeResult ?? {});
  if (!who.ok) {
    output.error(`${shown} is not agent-lsp: ${who.said}`);
    await client.dispose(2000).catch(() => undefined);
    return { server: { state: 'failed', message: messages.notAgentLsp(found.command, who.said) } };
  }
  output.info(`agent-lsp ${client.initializeResult?.serverInfo?.version ?? ''} ready; features: ${who.features.join(', ') || 'none'}`);
  return { client, features: who.features, stderr };
}

/** The Python extension's API when it is installed (activated on demand), else undefined. */
async function pythonApi(): Promise<PythonExtensionApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
  if (!extension) return undefined;
  try {
    return extension.isActive ? extension.exports : await extension.activate();
  } catch {
    return undefined;
  }
}
