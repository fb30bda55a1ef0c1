import { describe, expect, it } from 'vitest';
import { indexFrom, indexOf, statusLook } from './statusItem';

const LOADING = 'index: loading — `pyright` reports work under way: 3 files to analyze';

describe('the status bar item', () => {
  it('reads the index line ending a language answer, and nothing else', () => {
    expect(indexOf(`a.py:1:5: def greet\nindex: ready — old\n${LOADING}`))
      .toEqual({ state: 'loading', why: '`pyright` reports work under way: 3 files to analyze' });
    expect(indexOf('index: maybe — not a state\nindex: ready')).toBeUndefined();
    expect(indexOf(null)).toBeUndefined();
    expect(indexOf(`${LOADING}\nmore output`)).toBeUndefined();
    expect(indexFrom({ kind: 'tool_call_update', toolCallId: 't', status: 'completed', output: LOADING }))
      .toEqual({ state: 'loading', why: '`pyright` reports work under way: 3 files to analyze' });
    expect(indexFrom({ kind: 'tool_call_update', toolCallId: 't', status: 'running', output: LOADING })).toBeUndefined();
    expect(indexFrom({ kind: 'text_delta', text: LOADING })).toBeUndefined();
  });

  it('shows the server state, and the index status beside it while the server is ready', () => {
    const index = { state: 'stale', why: 'files changed on disk that `jedi` was not told of yet' } as const;
    expect(statusLook({ state: 'ready', features: [] })).toEqual(
      { text: '$(comment-discussion) Agent', tooltip: 'Agent LSP: ready', label: 'Agent LSP: ready' });
    expect(statusLook({ state: 'ready', features: [] }, index)).toEqual({
      text: '$(comment-discussion) Agent · index stale',
      tooltip: 'Agent LSP: ready\nindex: stale — files changed on disk that `jedi` was not told of yet '
        + '(the agent\'s last language answer)',
      label: 'Agent LSP: ready, index stale',
    });
    expect(statusLook({ state: 'crashed', message: 'The agent server stopped.' }, index)).toEqual(
      { text: '$(error) Agent', tooltip: 'The agent server stopped.', label: 'Agent LSP: stopped' });
  });
});
