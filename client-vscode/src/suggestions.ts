/**
 * Suggestions as you type (PROTOCOL §10) on the extension's side. vscode-languageclient 11 carries the inline
 * completion feature among its stable ones: it registers VS Code's inline completion provider when the server
 * declares `inlineCompletionProvider`, sends `textDocument/inlineCompletion`, shows the items as ghost text (Tab
 * accepts, the editor's accept-word key takes a word) and runs an accepted item's command (`agent.completionAccepted`,
 * a server command) after the insert. This file adds what the feature lacks: the on / off / working state
 * behind the status bar item, the middleware that tracks the requests in flight and asks nothing while
 * suggestions are off, and the toggle that keeps the state in `agentLsp.completions.enabled`.
 */
import type * as vscode from 'vscode';
import type { CompletionStatsResult } from './protocol';

/** The extension's command that turns suggestions on or off. */
export const TOGGLE_COMMAND = 'agentLsp.toggleCompletions';
/** The extension's command that shows the server's figures (agent/completionStats). */
export const STATS_COMMAND = 'agentLsp.showCompletionStats';
/** The server's command an accepted item carries: it only counts, so it never opens the chat panel. */
export const COMPLETION_ACCEPTED = 'agent.completionAccepted';
/** The setting that holds the state, under `agentLsp.`. */
export const ENABLED_KEY = 'completions.enabled';

export type SuggestionState = 'on' | 'off' | 'working';

/** How the status bar item looks in a state: its text (with an icon), tooltip and accessible label. */
export interface Look { text: string; tooltip: string; label: string }

export function look(state: SuggestionState): Look {
  const [icon, tooltip] = {
    on: ['$(sparkle)', 'Agent suggestions as you type: on. Click to turn them off.'],
    working: ['$(loading~spin)', 'Agent suggestions as you type: asking the model… Click to turn them off.'],
    off: ['$(circle-slash)', 'Agent suggestions as you type: off. Click to turn them on.'],
  }[state];
  return { text: `${icon} Suggest`, tooltip, label: `Agent suggestions: ${state}` };
}

/** The middleware signature of vscode-languageclient's inline completion feature (`next` sends the request). */
type Provide = (document: vscode.TextDocument, position: vscode.Position, context: vscode.InlineCompletionContext,
  token: vscode.CancellationToken) => vscode.ProviderResult<vscode.InlineCompletionItem[] | vscode.InlineCompletionList>;

/**
 * The state of suggestions: on or off (the setting), working while a request is in flight, and whether to show
 * it at all (only while a server that offers suggestions runs). `render` gets the look, or undefined to hide.
 */
export class Suggestions {
  /** The requests in flight (each its own object: those of a stopped client are dropped with it). */
  private readonly inFlight = new Set<object>();
  private available = false;

  constructor(private enabled: boolean, private readonly render: (look: Look | undefined) => void) {
    this.update();
  }

  get state(): SuggestionState {
    return !this.enabled ? 'off' : this.inFlight.size > 0 ? 'working' : 'on';
  }

  /** The setting changed (or was read again). */
  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    this.update();
  }

  /** A server that offers suggestions is running (true), or none is (false: the item is hidden). */
  setAvailable(available: boolean): void {
    this.available = available;
    if (!available) this.inFlight.clear();  // a stopped client's requests may never end
    this.update();
  }

  /** The language client's `provideInlineCompletionItems` middleware. Off: no request at all (the server would
   * answer none with no model call; asking per keystroke for that is traffic for nothing). On: the request is
   * in flight until it settles or VS Code cancels it (a cancelled request may never be answered). */
  readonly provideInlineCompletionItems = (document: vscode.TextDocument, position: vscode.Position,
    context: vscode.InlineCompletionContext, token: vscode.CancellationToken, next: Provide,
  ): vscode.ProviderResult<vscode.InlineCompletionItem[] | vscode.InlineCompletionList> => {
    if (!this.enabled) return undefined;
    const request = {};
    this.inFlight.add(request);
    this.update();
    let cancelled: vscode.Disposable | undefined;
    const end = () => {
      cancelled?.dispose();
      if (this.inFlight.delete(request)) this.update();
    };
    cancelled = token.onCancellationRequested(end);
    if (!this.inFlight.has(request)) cancelled.dispose();
    return Promise.resolve(next(document, position, context, token)).finally(end);
  };

  private update(): void {
    this.render(this.available ? look(this.state) : undefined);
  }
}

/** Where the toggle writes: the workspace's settings when they set `completions.enabled` (a write to the user's
 * settings would not show through them), else the user's. */
export function toggleTarget(levels: { globalValue?: unknown; workspaceValue?: unknown } | undefined): 'workspace' | 'global' {
  return levels?.workspaceValue !== undefined ? 'workspace' : 'global';
}

/** Whether suggestions are on: `agentLsp.completions.enabled` unless it is `false` (a value of the wrong type
 * is warned about by the settings check and leaves them on, the default). */
export function enabledIn(config: { get<T>(key: string): T | undefined }): boolean {
  return config.get<unknown>(ENABLED_KEY) !== false;
}

/** The next edits' figures of agent/completionStats (PROTOCOL §11), from a server that has them. */
export interface NextEditStats {
  requests: number; modelCalls: number; shown: number; accepted: number;
  stale: number; cancelled: number; filtered: number; errors: number;
}

/** agent/completionStats as one sentence (shown by Agent: Show Suggestion Statistics), and one more for next
 * edits when the server counts them. */
export function statsMessage(s: Omit<CompletionStatsResult, 'nextEdits'> & { nextEdits?: NextEditStats }): string {
  const n = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;
  const e = s.nextEdits;
  return `Suggestions since the server started: ${n(s.requests, 'request')}, ${n(s.modelCalls, 'model call')}, `
    + `${s.reused} answered from an earlier suggestion; ${s.shown} shown, ${s.accepted} accepted, `
    + `${s.partiallyAccepted} partly accepted; ${s.cancelled} cancelled, ${s.stale} stale, ${n(s.errors, 'error')}.`
    + (e ? ` Next edits: ${n(e.requests, 'request')}, ${n(e.modelCalls, 'model call')}; ${e.shown} shown, `
      + `${e.accepted} accepted; ${e.filtered} filtered, ${e.cancelled} cancelled, ${e.stale} stale, ${n(e.errors, 'error')}.` : '');
}
