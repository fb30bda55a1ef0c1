import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundledPythons, chooseServer, probePython, pythonCandidates } from './bundled';

const ROOT = path.resolve(__dirname, '..', '..');

/** An extension directory as `python -m release` lays it out, its libraries being this checkout (enough for
 * `-m agent_lsp --version`, which imports no dependency). */
function extensionDir(pythons: string[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-lsp-ext-'));
  for (const py of pythons) fs.mkdirSync(path.join(dir, 'bundled', 'libs', `py${py}`), { recursive: true });
  fs.mkdirSync(path.join(dir, 'bundled', 'libs', 'shared', 'bin'), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'agent_lsp'), path.join(dir, 'bundled', 'libs', 'shared', 'agent_lsp'));
  return dir;
}

describe('the bundled server', () => {
  it('starts `<python> -m agent_lsp` with the bundled libraries when agent-lsp is not on PATH, and that runs', async () => {
    const version = await probePython(['python3']);
    expect(version).toMatch(/^3\.\d+$/);
    const dir = extensionDir(['3.10', version!, '3.99']);
    expect(bundledPythons(dir)).toEqual(['3.10', version, '3.99']);
    const chosen = await chooseServer({ kind: 'missing', command: 'agent-lsp', args: ['--log-level', 'DEBUG'] }, dir,
      async () => [['/nonexistent/python'], ['python3']]);
    const libs = path.join(dir, 'bundled', 'libs');
    expect(chosen).toEqual({
      kind: 'found', command: `agent-lsp (bundled, Python ${version})`, program: 'python3',
      args: ['-m', 'agent_lsp', '--log-level', 'DEBUG'],
      env: {
        PYTHONPATH: `${libs}/py${version}:${libs}/shared`, PYTHONNOUSERSITE: '1',
        PATH: `${libs}/shared/bin:${process.env.PATH}`,
      },
    });
    if (chosen.kind !== 'found') throw new Error('not found');
    const said = execFileSync(chosen.program, [...chosen.args.slice(0, 2), '--version'],
      { env: { ...process.env, ...chosen.env }, cwd: os.tmpdir(), encoding: 'utf8' });
    expect(said).toMatch(/^agent-lsp-server \d+\.\d+\.\d+ \(protocol \d+\)\n$/);
  });

  it('says which Python to install when none fits', async () => {
    const dir = extensionDir(['3.98', '3.99']);
    const chosen = await chooseServer({ kind: 'missing', command: 'agent-lsp', args: [] }, dir,
      async () => [['/nonexistent/python'], ['python3']]);
    const version = await probePython(['python3']);
    expect(chosen).toEqual({
      kind: 'noPython',
      message: `agent-lsp needs Python 3.98, 3.99 to run the server this extension carries (/nonexistent/python did `
        + `not run; python3 is Python ${version}). Install Python 3.99 (python3 on PATH, on Windows the py launcher, `
        + 'or select it in the Python extension), or install agent-lsp with "pipx install agent-lsp-server" and reload.',
    });
  });

  it('leaves a found program, a set serverCommand, and a build without a bundled server alone', async () => {
    const dir = extensionDir(['3.11']);
    const never = async (): Promise<string[][]> => { throw new Error('no Python is looked for'); };
    expect(await chooseServer({ kind: 'found', command: 'agent-lsp', program: '/bin/agent-lsp', args: [] }, dir, never))
      .toEqual({ kind: 'found', command: 'agent-lsp', program: '/bin/agent-lsp', args: [], env: {} });
    expect(await chooseServer({ kind: 'missing', command: '~/venv/bin/agent-lsp', args: [] }, dir, never))
      .toEqual({ kind: 'missing', command: '~/venv/bin/agent-lsp', args: [] });
    const source = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-lsp-ext-'));
    expect(await chooseServer({ kind: 'missing', command: 'agent-lsp', args: [] }, source, async () => [['python3']]))
      .toEqual({ kind: 'missing', command: 'agent-lsp', args: [] });
  });

  it("tries the Python extension's interpreter first, then python3 (on Windows py -3, then python)", async () => {
    const api = {
      environments: {
        getActiveEnvironmentPath: () => ({ path: '/venv' }),
        resolveEnvironment: async () => ({ executable: { uri: { fsPath: '/venv/bin/python' } } }),
      },
    };
    expect(await pythonCandidates(api, 'linux')).toEqual([['/venv/bin/python'], ['python3']]);
    expect(await pythonCandidates(undefined, 'darwin')).toEqual([['python3']]);
    expect(await pythonCandidates({ environments: { ...api.environments, resolveEnvironment: async () => { throw new Error('x'); } } }, 'linux'))
      .toEqual([['python3']]);
    expect(await pythonCandidates(api, 'win32')).toEqual([['/venv/bin/python'], ['py', '-3'], ['python']]);
  });

  it('starts the server with the arguments a Python command carries (py -3)', async () => {
    const dir = extensionDir(['3.12']);
    const chosen = await chooseServer({ kind: 'missing', command: 'agent-lsp', args: ['--stdio'] }, dir,
      async () => [['py', '-3']], async (python) => (python.join(' ') === 'py -3' ? '3.12' : undefined));
    expect(chosen).toMatchObject({ kind: 'found', program: 'py', args: ['-3', '-m', 'agent_lsp', '--stdio'] });
  });
});
