/**
 * The extension's settings (`agentLsp.*`): how to start the server (serverCommand, serverArgs), and the part
 * the server itself reads — sent as initializationOptions and as the answer to workspace/configuration. Only
 * the server's own keys are sent, only those the user set (so the server's defaults apply), and a value of the
 * wrong type is left out with a warning naming it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PERMISSION_MODES, type PermissionMode } from './protocol';
import type { AgentLspSettings } from './protocol/generated/settings';

export const SECTION = 'agentLsp';
export const DEFAULT_COMMAND = 'agent-lsp';
/** What to install, as every message says it (plain text: VS Code notifications do not render markdown). */
export const INSTALL = 'pipx install agent-lsp-server';
export const INSTALL_ALT = 'uv tool install agent-lsp-server';
/** The server name and lowest protocol version this extension accepts (initialize's serverInfo). */
export const SERVER_NAME = 'agent-lsp-server';
export const MIN_PROTOCOL = 1;

/** Anything with VS Code's WorkspaceConfiguration.get (and, optionally, inspect). */
export interface SettingsReader {
  get<T>(key: string): T | undefined;
  inspect?(key: string): { globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown } | undefined;
}

/** The settings the server reads (PROTOCOL §1) as the wire carries them. */
export interface ServerSettings {
  provider?: string;
  model?: string;
  baseUrl?: string;
  maxTurns?: number;
  permissionMode?: PermissionMode;
  thinking?: false | 'adaptive' | { budgetTokens: number };
  maxTokens?: number;
  contextWindow?: number;
  compactThreshold?: number;
  memoryFile?: 'agents' | 'private';
  /** Suggestions as you type (PROTOCOL §10): `agentLsp.completions.*`, each key the user set. */
  completions?: CompletionSettings;
}
export type CompletionSettings = NonNullable<AgentLspSettings['completions']>;

type Check = (value: unknown) => unknown;
const text: Check = (v) => (typeof v === 'string' ? (v.trim() || undefined) : bad('a string'));
const integer = (low: number, high: number): Check => (v) =>
  (Number.isInteger(v) && (v as number) >= low && (v as number) <= high ? v : bad(`an integer from ${low} to ${high}`));
const choice = (options: readonly string[], allowEmpty = false): Check => (v) =>
  (allowEmpty && v === '' ? undefined : options.includes(v as string) ? v : bad(`one of ${options.join(', ')}`));

/** `thinking`: "off", "adaptive", or a token budget ("4096" in the Settings UI, or a number / object in JSON). */
const thinking: Check = (v) => {
  if (v === false || v === 'off' || v === '') return false;
  if (v === 'adaptive') return 'adaptive';
  const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : typeof v === 'number' ? v
    : typeof v === 'object' && v !== null ? (v as { budgetTokens?: unknown }).budgetTokens : NaN;
  return Number.isInteger(n) && (n as number) >= 1024 ? { budgetTokens: n } : bad('"off", "adaptive" or a token budget of at least 1024');
};

class BadValue extends Error {}
function bad(expected: string): never { throw new BadValue(expected); }

/** Every server setting, its check, in the order the docs list them. */
const SERVER_KEYS: Record<Exclude<keyof ServerSettings, 'completions'>, Check> = {
  provider: choice(['anthropic', 'openai', 'demo'], true),
  model: text,
  baseUrl: text,
  maxTurns: integer(-1, 100),
  permissionMode: choice(PERMISSION_MODES),
  thinking,
  maxTokens: integer(1, 1_000_000),
  contextWindow: integer(1_000, 10_000_000),
  compactThreshold: (v) => (typeof v === 'number' && v >= 0.05 && v <= 1 ? v : bad('a number from 0.05 to 1')),
  memoryFile: choice(['agents', 'private']),
};

/** `completions.*`: each is its own setting in VS Code (`agentLsp.completions.maxLines`…), sent as one object. */
const COMPLETION_KEYS: Record<keyof CompletionSettings, Check> = {
  enabled: (v) => (typeof v === 'boolean' ? v : bad('true or false')),
  provider: choice(['anthropic', 'openai'], true),
  model: text,
  baseUrl: text,
  api: choice(['chat', 'fim']),
  exclude: (v) => (Array.isArray(v) && v.every((g) => typeof g === 'string')
    ? v.map((g: string) => g.trim()).filter(Boolean) : bad('a list of globs')),
  maxLines: integer(1, 200),
  timeout: (v) => (typeof v === 'number' && v >= 0.1 && v <= 600 ? v : bad('a number of seconds from 0.1 to 600')),
};
/** Every key the server reads, as VS Code names it under `agentLsp.` (`completions.maxLines` for a nested one). */
export const SERVER_SETTING_KEYS = [
  ...Object.keys(SERVER_KEYS),
  ...Object.keys(COMPLETION_KEYS).map((k) => `completions.${k}`),
];

/** Whether the user set `key` anywhere (without inspect, as in unit tests: whether it has a value). */
function isSet(config: SettingsReader, key: string): boolean {
  const i = config.inspect?.(key);
  if (!i) return config.get(key) !== undefined;
  return i.globalValue !== undefined || i.workspaceValue !== undefined || i.workspaceFolderValue !== undefined;
}

/** The settings the server reads, and one warning per value of the wrong type (that value is left out). */
export function serverSettings(config: SettingsReader): { settings: ServerSettings; warnings: string[] } {
  const warnings: string[] = [];
  const settings = checked(config, SERVER_KEYS, '', warnings);
  const completions = checked(config, COMPLETION_KEYS, 'completions.', warnings);
  if (Object.keys(completions).length) settings.completions = completions;
  return { settings: settings as ServerSettings, warnings };
}

/** The keys of `checks` the user set (under `prefix`), checked; a bad one is left out with a warning naming it. */
function checked(config: SettingsReader, checks: Record<string, Check>, prefix: string, warnings: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, check] of Object.entries(checks)) {
    if (!isSet(config, prefix + key)) continue;
    const value = config.get<unknown>(prefix + key);
    try {
      const clean = check(value);
      if (clean !== undefined) out[key] = clean;
    } catch (e) {
      if (!(e instanceof BadValue)) throw e;
      warnings.push(`${SECTION}.${prefix}${key} must be ${e.message} (it is ${JSON.stringify(value)}); the default is used.`);
    }
  }
  return out;
}

export function permissionMode(config: SettingsReader): PermissionMode {
  const mode = config.get<PermissionMode>('permissionMode');
  return mode && PERMISSION_MODES.includes(mode) ? mode : 'default';
}

/** Where the server program is, as far as we can tell before starting it. */
export type ServerProgram =
  | { kind: 'found'; command: string; program: string; args: string[] }
  | { kind: 'missing' | 'notExecutable'; command: string; program?: string; args: string[] };

/**
 * `agentLsp.serverCommand` (a program: a name on PATH, an absolute path, or a path relative to the workspace
 * folder, with `${workspaceFolder}` and `~` expanded) plus `agentLsp.serverArgs`. An array in serverCommand
 * (the form older versions documented) still works: its first element is the program.
 */
export function serverProgram(config: SettingsReader, folder: string | undefined,
  envPath = process.env.PATH ?? '', home = os.homedir()): ServerProgram {
  const raw = config.get<unknown>('serverCommand');
  let command = DEFAULT_COMMAND;
  let args: string[] = [];
  if (typeof raw === 'string' && raw.trim()) command = raw.trim();
  else if (Array.isArray(raw) && raw.length > 0 && raw.every((a) => typeof a === 'string') && raw[0].trim()) {
    [command, ...args] = raw as string[];
  }
  const extra = config.get<unknown>('serverArgs');
  if (Array.isArray(extra)) args = [...args, ...extra.filter((a): a is string => typeof a === 'string')];
  const expand = (s: string) => expandPath(s, folder, home);
  args = args.map(expand);
  const expanded = expand(command);
  const candidates = expanded.includes('/') || expanded.includes(path.sep)
    ? [path.resolve(folder ?? process.cwd(), expanded)]
    : envPath.split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, expanded));
  const exts = process.platform === 'win32' ? ['', ...(process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';')] : [''];
  let notExecutable: string | undefined;
  for (const file of candidates.flatMap((base) => exts.map((ext) => base + ext))) {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) continue;
    if (stat.isFile() && executable(file)) return { kind: 'found', command, program: file, args };
    notExecutable ??= file;
  }
  return notExecutable ? { kind: 'notExecutable', command, program: notExecutable, args } : { kind: 'missing', command, args };
}

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `${workspaceFolder}`, `${userHome}` and a leading `~` expanded. */
export function expandPath(value: string, folder: string | undefined, home = os.homedir()): string {
  let out = value.replace(/\$\{userHome\}/g, home);
  if (folder) out = out.replace(/\$\{workspaceFolder\}/g, folder);
  if (out === '~' || out.startsWith('~/')) out = home + out.slice(1);
  return out;
}

/** The messages of the identity decisions (identity.md), shared by every client of agent-lsp. */
export const messages = {
  missing: (command: string) => `agent-lsp was not found (${command}). Install it with "${INSTALL}" or `
    + `"${INSTALL_ALT}", or set ${SECTION}.serverCommand to its full path.`,
  notExecutable: (command: string, file: string) => `${command} is not an executable program (${file}). `
    + `Install agent-lsp with "${INSTALL}" (or "${INSTALL_ALT}") and set ${SECTION}.serverCommand to its path.`,
  failedToStart: (command: string, reason: string) => `${command} failed to start (${reason}). If it is not `
    + `agent-lsp, install agent-lsp with "${INSTALL}" (or "${INSTALL_ALT}") and set ${SECTION}.serverCommand to its path.`,
  notAgentLsp: (command: string, said: string) => `${command} is not agent-lsp (it reports ${said}). Install `
    + `agent-lsp with "${INSTALL}" (or "${INSTALL_ALT}") and set ${SECTION}.serverCommand to its path.`,
};

/** Whether an initialize result is agent-lsp's; otherwise what it said instead, for the message. */
export function identify(result: { serverInfo?: { name?: string; version?: string }; capabilities?: { experimental?: unknown } }):
  { ok: true; features: string[] } | { ok: false; said: string } {
  const agent = (result.capabilities?.experimental as { agent?: { protocolVersion?: unknown; features?: unknown } } | undefined)?.agent;
  const version = agent?.protocolVersion;
  const name = result.serverInfo?.name;
  if (name === SERVER_NAME && typeof version === 'number' && version >= MIN_PROTOCOL) {
    return { ok: true, features: Array.isArray(agent?.features) ? agent.features.filter((f): f is string => typeof f === 'string') : [] };
  }
  const who = name ? `"${[name, result.serverInfo?.version].filter(Boolean).join(' ')}"` : 'no server name';
  return { ok: false, said: typeof version === 'number' ? `${who}, protocol ${version}` : `${who} without the agent protocol` };
}
