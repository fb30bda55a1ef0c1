import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandPath, identify, serverProgram, serverSettings } from './settings';

const reader = (values: Record<string, unknown>) => ({ get: <T>(key: string) => values[key] as T | undefined });

describe('settings', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-lsp-'));
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.writeFileSync(path.join(dir, 'bin/agent-lsp'), '#!/bin/sh\n', { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'not-exec'), '', { mode: 0o644 });

  it('finds the program on PATH, by absolute path, relative to the workspace folder, with ~ and ${workspaceFolder}', () => {
    const exe = path.join(dir, 'bin/agent-lsp');
    expect(serverProgram(reader({}), undefined, `/nonexistent:${dir}/bin`)).toEqual({ kind: 'found', command: 'agent-lsp', program: exe, args: [] });
    expect(serverProgram(reader({ serverCommand: ' bin/agent-lsp ', serverArgs: ['--data-dir', '${workspaceFolder}/d'] }), dir, ''))
      .toEqual({ kind: 'found', command: 'bin/agent-lsp', program: exe, args: ['--data-dir', `${dir}/d`] });
    expect(serverProgram(reader({ serverCommand: '${workspaceFolder}/bin/agent-lsp' }), dir, '').kind).toBe('found');
    expect(serverProgram(reader({ serverCommand: '~/bin/agent-lsp' }), undefined, '', dir).kind).toBe('found');
    // the argument-list form older versions documented
    expect(serverProgram(reader({ serverCommand: [exe, '--log-level', 'debug'] }), undefined, '')).toEqual(
      { kind: 'found', command: exe, program: exe, args: ['--log-level', 'debug'] });
  });

  it('tells a missing program from one that is not executable (a plain file, a directory)', () => {
    expect(serverProgram(reader({ serverCommand: 'agent-lsp' }), dir, '/nonexistent').kind).toBe('missing');
    expect(serverProgram(reader({ serverCommand: 'not-exec' }), undefined, dir).kind).toBe('notExecutable');
    expect(serverProgram(reader({ serverCommand: './bin' }), dir, '')).toMatchObject({ kind: 'notExecutable', program: path.join(dir, 'bin') });
  });

  it('expands ${workspaceFolder}, ${userHome} and a leading ~ only', () => {
    expect(expandPath('~/x/~', '/w', '/home/u')).toBe('/home/u/x/~');
    expect(expandPath('${workspaceFolder}/a:${userHome}', '/w', '/home/u')).toBe('/w/a:/home/u');
    expect(expandPath('${workspaceFolder}/a', undefined, '/h')).toBe('${workspaceFolder}/a');
  });

  it('sends the server only its own keys, set ones only, and warns about a wrong-typed value by name', () => {
    const { settings, warnings } = serverSettings(reader({
      provider: 'demo', model: ' demo ', baseUrl: '', maxTurns: 7, permissionMode: 'plan', thinking: '4096',
      maxTokens: 'lots', contextWindow: 100_000, compactThreshold: 0.5, serverCommand: 'x', trace: { server: 'verbose' },
    }));
    expect(settings).toEqual({ provider: 'demo', model: 'demo', maxTurns: 7, permissionMode: 'plan',
      thinking: { budgetTokens: 4096 }, contextWindow: 100_000, compactThreshold: 0.5 });
    expect(warnings).toEqual(['agentLsp.maxTokens must be an integer from 1 to 1000000 (it is "lots"); the default is used.']);
    expect(serverSettings(reader({ thinking: 'off', provider: '' })).settings).toEqual({ thinking: false });
    expect(serverSettings(reader({ thinking: 'adaptive', permissionMode: 'yolo' }))).toEqual({
      settings: { thinking: 'adaptive' },
      warnings: ['agentLsp.permissionMode must be one of default, acceptEdits, plan, bypassPermissions (it is "yolo"); the default is used.'],
    });
  });

  it('sends agentLsp.completions.* as the completions object: set keys only, checked, a bad one named', () => {
    const { settings, warnings } = serverSettings(reader({
      'completions.enabled': false, 'completions.provider': 'openai', 'completions.model': ' qwen2.5-coder ',
      'completions.baseUrl': 'http://127.0.0.1:11434/v1', 'completions.api': 'fim',
      'completions.exclude': ['secrets/**', ' ', '*.sql '], 'completions.maxLines': 3, 'completions.timeout': 2.5,
    }));
    expect(settings).toEqual({ completions: { enabled: false, provider: 'openai', model: 'qwen2.5-coder',
      baseUrl: 'http://127.0.0.1:11434/v1', api: 'fim', exclude: ['secrets/**', '*.sql'], maxLines: 3, timeout: 2.5 } });
    expect(warnings).toEqual([]);
    const bad = serverSettings(reader({ model: 'demo', 'completions.maxLines': 0, 'completions.enabled': 'yes',
      'completions.timeout': 0, 'completions.exclude': '*.sql', 'completions.api': 'fill', 'completions.model': 'demo' }));
    expect(bad.settings).toEqual({ model: 'demo', completions: { model: 'demo' } });
    expect(bad.warnings).toEqual([
      'agentLsp.completions.enabled must be true or false (it is "yes"); the default is used.',
      'agentLsp.completions.api must be one of chat, fim (it is "fill"); the default is used.',
      'agentLsp.completions.exclude must be a list of globs (it is "*.sql"); the default is used.',
      'agentLsp.completions.maxLines must be an integer from 1 to 200 (it is 0); the default is used.',
      'agentLsp.completions.timeout must be a number of seconds from 0.1 to 600 (it is 0); the default is used.',
    ]);
    // Nothing set under completions: no object at all (an empty provider is the chat's, as unset).
    expect(serverSettings(reader({ 'completions.provider': '', 'completions.model': '' })).settings).toEqual({});
  });

  it('leaves out what the user did not set (inspect), so the server\'s defaults apply', () => {
    const config = { ...reader({ maxTurns: 25, model: 'm', 'completions.enabled': true, 'completions.maxLines': 4 }),
      inspect: (k: string) => (k === 'model' ? { globalValue: 'm' } : k === 'completions.maxLines' ? { workspaceValue: 4 } : {}) };
    expect(serverSettings(config).settings).toEqual({ model: 'm', completions: { maxLines: 4 } });
  });

  it('accepts agent-lsp-server with protocol 1 or later, and names what another program reports', () => {
    const agent = (v: unknown, features?: unknown) => ({ experimental: { agent: { protocolVersion: v, features } } });
    expect(identify({ serverInfo: { name: 'agent-lsp-server', version: '0.2.0' }, capabilities: agent(1, ['newSession']) }))
      .toEqual({ ok: true, features: ['newSession'] });
    expect(identify({ serverInfo: { name: 'agent-lsp', version: '0.23.5' }, capabilities: {} }))
      .toEqual({ ok: false, said: '"agent-lsp 0.23.5" without the agent protocol' });
    expect(identify({ serverInfo: { name: 'agent-lsp-server' }, capabilities: agent(0) }))
      .toEqual({ ok: false, said: '"agent-lsp-server", protocol 0' });
    expect(identify({})).toEqual({ ok: false, said: 'no server name without the agent protocol' });
  });
});
