import { describe, expect, it, vi } from 'vitest';
import type * as vscode from 'vscode';
import { CancellationTokenSource } from 'vscode-jsonrpc';
import { enabledIn, type Look, look, statsMessage, Suggestions, toggleTarget } from './suggestions';

vi.mock('vscode');

/** A Suggestions whose renders are recorded as the accessible labels (or 'hidden'). */
function recorded(enabled: boolean) {
  const seen: string[] = [];
  const suggestions = new Suggestions(enabled, (l: Look | undefined) => seen.push(l ? l.label : 'hidden'));
  return { suggestions, seen };
}

/** A request the test answers when it likes. */
function deferred() {
  let answer!: (items: vscode.InlineCompletionItem[]) => void;
  const promise = new Promise<vscode.InlineCompletionItem[]>((resolve) => { answer = resolve; });
  return { promise, answer };
}

const doc = {} as vscode.TextDocument;
const at = {} as vscode.Position;
const ctx = {} as vscode.InlineCompletionContext;
const tokenOf = (source: CancellationTokenSource) => source.token as unknown as vscode.CancellationToken;
const item = { insertText: 'rest of the line' } as vscode.InlineCompletionItem;

describe('suggestions as you type: the status bar item', () => {
  it('looks on, working and off, each with its own icon, tooltip and label', () => {
    expect(look('on')).toEqual({ text: '$(sparkle) Suggest', label: 'Agent suggestions: on',
      tooltip: 'Agent suggestions as you type: on. Click to turn them off.' });
    expect(look('working')).toEqual({ text: '$(loading~spin) Suggest', label: 'Agent suggestions: working',
      tooltip: 'Agent suggestions as you type: asking the model… Click to turn them off.' });
    expect(look('off')).toEqual({ text: '$(circle-slash) Suggest', label: 'Agent suggestions: off',
      tooltip: 'Agent suggestions as you type: off. Click to turn them on.' });
  });

  it('is hidden until a server that offers suggestions runs, and again when it stops', () => {
    const { suggestions, seen } = recorded(true);
    suggestions.setAvailable(true);
    suggestions.setEnabled(false);
    suggestions.setAvailable(false);
    suggestions.setEnabled(true);
    expect(seen).toEqual(['hidden', 'Agent suggestions: on', 'Agent suggestions: off', 'hidden', 'hidden']);
  });

  it('says working while a request is in flight, overlapping ones included, and on once all are answered', async () => {
    const { suggestions, seen } = recorded(true);
    suggestions.setAvailable(true);
    const first = deferred();
    const second = deferred();
    const next = vi.fn().mockReturnValueOnce(first.promise).mockReturnValueOnce(second.promise);
    const a = suggestions.provideInlineCompletionItems(doc, at, ctx, tokenOf(new CancellationTokenSource()), next);
    const b = suggestions.provideInlineCompletionItems(doc, at, ctx, tokenOf(new CancellationTokenSource()), next);
    expect(suggestions.state).toBe('working');
    first.answer([]);
    expect(await a).toEqual([]);
    expect(suggestions.state).toBe('working');
    second.answer([item]);
    expect(await b).toEqual([item]);
    expect(suggestions.state).toBe('on');
    expect(next).toHaveBeenCalledTimes(2);
    expect(next).toHaveBeenCalledWith(doc, at, ctx, expect.anything());
    expect(seen).toEqual(['hidden', 'Agent suggestions: on', 'Agent suggestions: working', 'Agent suggestions: working',
      'Agent suggestions: working', 'Agent suggestions: on']);
  });

  it('a request VS Code cancels is no longer working, even if it is never answered; a failed one neither', async () => {
    const { suggestions } = recorded(true);
    suggestions.setAvailable(true);
    const source = new CancellationTokenSource();
    void suggestions.provideInlineCompletionItems(doc, at, ctx, tokenOf(source), () => new Promise(() => {}));
    expect(suggestions.state).toBe('working');
    source.cancel();
    expect(suggestions.state).toBe('on');
    const failed = suggestions.provideInlineCompletionItems(doc, at, ctx, tokenOf(new CancellationTokenSource()),
      () => Promise.reject(new Error('connection lost')));
    await expect(failed).rejects.toThrow('connection lost');
    expect(suggestions.state).toBe('on');
  });

  it('asks nothing while off', async () => {
    const { suggestions, seen } = recorded(false);
    suggestions.setAvailable(true);
    const next = vi.fn();
    expect(await suggestions.provideInlineCompletionItems(doc, at, ctx, tokenOf(new CancellationTokenSource()), next))
      .toBeUndefined();
    expect(next).not.toHaveBeenCalled();
    expect(seen).toEqual(['hidden', 'Agent suggestions: off']);
  });

  it('a stopped server\'s requests in flight are dropped: the next server starts on, not working', () => {
    const { suggestions } = recorded(true);
    suggestions.setAvailable(true);
    void suggestions.provideInlineCompletionItems(doc, at, ctx, tokenOf(new CancellationTokenSource()), () => new Promise(() => {}));
    suggestions.setAvailable(false);
    suggestions.setAvailable(true);
    expect(suggestions.state).toBe('on');
  });
});

describe('suggestions as you type: the setting', () => {
  it('is on unless agentLsp.completions.enabled is false', () => {
    const reader = (value: unknown) => ({ get: <T>(key: string) => (key === 'completions.enabled' ? value as T : undefined) });
    expect([true, false, undefined, 'no'].map((v) => enabledIn(reader(v)))).toEqual([true, false, true, true]);
  });

  it('the toggle writes where it takes effect: the workspace when it sets the key, else the user settings', () => {
    expect(toggleTarget({ globalValue: false, workspaceValue: true })).toBe('workspace');
    expect(toggleTarget({ globalValue: false })).toBe('global');
    expect(toggleTarget({})).toBe('global');
    expect(toggleTarget(undefined)).toBe('global');
  });
});

describe('suggestions as you type: the server\'s figures', () => {
  it('say every count of agent/completionStats in one sentence', () => {
    expect(statsMessage({ requests: 12, modelCalls: 1, reused: 9, shown: 0, accepted: 2, partiallyAccepted: 0,
      cancelled: 1, stale: 0, errors: 1 })).toBe('Suggestions since the server started: 12 requests, 1 model call, '
      + '9 answered from an earlier suggestion; 0 shown, 2 accepted, 0 partly accepted; 1 cancelled, 0 stale, 1 error.');
    expect(statsMessage({ requests: 1, modelCalls: 1, reused: 0, shown: 0, accepted: 0, partiallyAccepted: 0,
      cancelled: 0, stale: 0, errors: 0, nextEdits: { requests: 5, modelCalls: 4, shown: 3, accepted: 1, stale: 1,
        cancelled: 1, filtered: 2, errors: 0 } })).toMatch(/ 0 errors\. Next edits: 5 requests, 4 model calls; 3 shown, 1 accepted; 2 filtered, 1 cancelled, 1 stale, 0 errors\.$/);
  });
});
