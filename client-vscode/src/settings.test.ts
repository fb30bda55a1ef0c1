import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findExecutable, serverArgv, serverSettings } from './settings';

const reader = (values: Record<string, unknown>) => ({ get: <T>(key: string) => values[key] as T | undefined });

describe('settings', () => {
  it('starts the server from a program name or an argument list, else the default', () => {
    expect(serverArgv(reader({ serverCommand: ' /opt/agent-lsp ' }))).toEqual(['/opt/agent-lsp']);
    expect(serverArgv(reader({ serverCommand: ['python3', '-m', 'agent_lsp'] }))).toEqual(['python3', '-m', 'agent_lsp']);
    for (const bad of [undefined, '', [], [1], ['']]) expect(serverArgv(reader({ serverCommand: bad }))).toEqual(['agent-lsp']);
  });

  it('sends the server only its own keys, leaving unset ones to its defaults', () => {
    expect(serverSettings(reader({ model: ' demo ', permissionMode: 'plan', serverCommand: 'x', trace: { server: 'verbose' } })))
      .toEqual({ model: 'demo', permissionMode: 'plan' });
    expect(serverSettings(reader({ model: '', permissionMode: 'yolo' }))).toEqual({});
    expect(serverSettings(reader({ provider: 'openai', model: 'qwen2.5-coder:14b', baseUrl: ' http://127.0.0.1:11434/v1 ',
      contextWindow: 32768, maxTurns: null, thinking: false, compactThreshold: undefined })))
      .toEqual({ provider: 'openai', model: 'qwen2.5-coder:14b', baseUrl: 'http://127.0.0.1:11434/v1',
        contextWindow: 32768, thinking: false });
  });

  it('finds a program on PATH or by path, only when it is an executable file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-lsp-'));
    fs.writeFileSync(path.join(dir, 'agent-lsp'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'not-exec'), '', { mode: 0o644 });
    fs.mkdirSync(path.join(dir, 'a-dir'));
    expect(findExecutable('agent-lsp', `/nonexistent:${dir}`)).toBe(path.join(dir, 'agent-lsp'));
    expect(findExecutable('./agent-lsp', '', dir)).toBe(path.join(dir, 'agent-lsp'));
    expect(findExecutable('not-exec', dir)).toBeUndefined();
    expect(findExecutable('a-dir', dir)).toBeUndefined();
    expect(findExecutable('agent-lsp', '/nonexistent')).toBeUndefined();
  });
});
