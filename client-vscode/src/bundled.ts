/**
 * The server the .vsix carries (the vscode-python-tools-extension-template convention): `python -m build` makes
 * the wheel, `python -m release` installs it and its dependencies into bundled/libs/pyX.Y (per Python: compiled
 * modules) and bundled/libs/shared (the rest, and bin/rg). It runs as `<python> -m agent_lsp` with those on
 * PYTHONPATH, used when agentLsp.serverCommand is unset and `agent-lsp` is not on PATH.
 *
 * Python 3.11 or newer: the Python extension's selected interpreter when that extension is installed, else
 * `python3` on PATH (on Windows: the `py -3` launcher, else `python`). The .vsix is per platform, so the libraries
 * it carries are that platform's; of them the ones of the Python found are used.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_COMMAND, type ServerProgram } from './settings';

export const MIN_PYTHON: [number, number] = [3, 11];

/** A Python to try: the program, and the arguments that make it Python 3 (`py -3` on Windows). */
export type PythonCommand = string[];

/** What the bundled server needs: the program, its arguments and the environment it adds. */
export type BundledServer =
  | { kind: 'found'; python: string; version: string; args: string[]; env: Record<string, string> }
  | { kind: 'noPython'; message: string };

/** The Python versions the .vsix carries the server for (the names of bundled/libs/pyX.Y), oldest first. */
export function bundledPythons(extensionPath: string): string[] {
  const libs = path.join(extensionPath, 'bundled', 'libs');
  let names: string[];
  try {
    names = fs.readdirSync(libs);
  } catch {
    return [];
  }
  return names.map((n) => /^py(\d+\.\d+)$/.exec(n)?.[1]).filter((v): v is string => !!v)
    .sort((a, b) => compare(a, b));
}

function compare(a: string, b: string): number {
  const [am, an] = a.split('.').map(Number);
  const [bm, bn] = b.split('.').map(Number);
  return am - bm || an - bn;
}

/** `python`'s "X.Y", or undefined when it does not run (a bounded wait). */
export function probePython(python: PythonCommand, timeoutMs = 15_000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const [program, ...args] = python;
    execFile(program, [...args, '-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { timeout: timeoutMs },
      (error, stdout) => resolve(error ? undefined : /^(\d+\.\d+)\s*$/.exec(stdout)?.[1]));
  });
}

/**
 * The bundled server started with the first of `pythons` (paths or names on PATH) that is 3.11+ and that the
 * .vsix carries libraries for; undefined when the .vsix carries no server (a build from source).
 */
export async function bundledServer(extensionPath: string, pythons: PythonCommand[], serverArgs: string[],
  probe: (python: PythonCommand) => Promise<string | undefined> = probePython): Promise<BundledServer | undefined> {
  const carried = bundledPythons(extensionPath);
  if (carried.length === 0) return undefined;
  const libs = path.join(extensionPath, 'bundled', 'libs');
  const seen: string[] = [];
  // Windows spells it Path: a second PATH key beside it would leave which one the server gets to chance
  const pathKey = Object.keys(process.env).find((k) => k.toUpperCase() === 'PATH') ?? 'PATH';
  for (const python of pythons) {
    const version = await probe(python);
    const name = python.join(' ');
    seen.push(version ? `${name} is Python ${version}` : `${name} did not run`);
    if (!version || !carried.includes(version)) continue;
    const shared = path.join(libs, 'shared');
    return {
      kind: 'found', python: python[0], version, args: [...python.slice(1), '-m', 'agent_lsp', ...serverArgs],
      env: {
        PYTHONPATH: [path.join(libs, `py${version}`), shared].join(path.delimiter),
        PYTHONNOUSERSITE: '1',  // the user's own site-packages must not shadow the bundled libraries
        [pathKey]: [path.join(shared, 'bin'), process.env[pathKey] ?? ''].filter(Boolean).join(path.delimiter),  // rg
      },
    };
  }
  return {
    kind: 'noPython',
    message: `agent-lsp needs Python ${carried.join(', ')} to run the server this extension carries (`
      + `${seen.join('; ') || 'no Python was found'}). Install Python ${carried[carried.length - 1]} `
      + '(python3 on PATH, on Windows the py launcher, or select it in the Python extension), or install agent-lsp with '
      + '"pipx install agent-lsp-server" and reload.',
  };
}

/** The Python extension's API, as much of it as we use (ms-python.python's `environments`). */
export interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(): { path: string };
    resolveEnvironment(env: { path: string } | string): Promise<{ executable?: { uri?: { fsPath: string } } } | undefined>;
  };
}

/** The Pythons to try, in order: the Python extension's selected interpreter (when it is installed), then
 * python3 (on Windows, where python3 is rarely on PATH: the py launcher's Python 3, then python). */
export async function pythonCandidates(api: PythonExtensionApi | undefined,
  platform: NodeJS.Platform = process.platform): Promise<PythonCommand[]> {
  const found: PythonCommand[] = [];
  try {
    const active = api?.environments?.getActiveEnvironmentPath();
    const resolved = active ? await api?.environments?.resolveEnvironment(active) : undefined;
    const exe = resolved?.executable?.uri?.fsPath;
    if (exe) found.push([exe]);
  } catch {
    // an older Python extension, or none selected: python3 on PATH below
  }
  return [...found, ...(platform === 'win32' ? [['py', '-3'], ['python']] : [['python3']])];
}

/** How to start the server: `found` when it names a program; the bundled server in place of a missing
 * `agent-lsp` (the default command); else `found` as it is (its message says what to install). */
export async function chooseServer(found: ServerProgram, extensionPath: string | undefined,
  pythons: () => Promise<PythonCommand[]>,
  probe: (python: PythonCommand) => Promise<string | undefined> = probePython): Promise<StartCommand> {
  if (found.kind === 'found') return { ...found, env: {} };
  if (found.kind !== 'missing' || found.command !== DEFAULT_COMMAND || !extensionPath) return found;
  const bundled = await bundledServer(extensionPath, await pythons(), found.args, probe);
  if (!bundled) return found;
  if (bundled.kind === 'noPython') return bundled;
  return {
    kind: 'found', command: `agent-lsp (bundled, Python ${bundled.version})`, program: bundled.python,
    args: bundled.args, env: bundled.env,
  };
}

export type StartCommand =
  | (Extract<ServerProgram, { kind: 'found' }> & { env: Record<string, string> })
  | Exclude<ServerProgram, { kind: 'found' }>
  | Extract<BundledServer, { kind: 'noPython' }>;
