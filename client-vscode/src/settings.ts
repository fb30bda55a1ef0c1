/**
 * The extension's settings (`agentLsp.*`): how to start the server, and the part the server itself reads —
 * sent as initializationOptions and as the answer to workspace/configuration. The server warns about any key
 * it does not know, so only its own keys are sent (not serverCommand or trace).
 */
import fs from 'node:fs';
import path from 'node:path';
import { PERMISSION_MODES, type PermissionMode } from './protocol';

export const SECTION = 'agentLsp';
export const DEFAULT_COMMAND = 'agent-lsp';
/** Plain text: VS Code notifications do not render markdown. */
export const INSTALL_HINT =
  'Install it with "pip install agent-lsp", or set agentLsp.serverCommand to the command that starts it.';

/** Anything with VS Code's WorkspaceConfiguration.get. */
export interface SettingsReader { get<T>(key: string): T | undefined }

/** `agentLsp.serverCommand`: a program ("agent-lsp") or an argument list (["python3", "-m", "agent_lsp"]). */
export function serverArgv(config: SettingsReader): string[] {
  const value = config.get<unknown>('serverCommand');
  if (typeof value === 'string' && value.trim()) return [value.trim()];
  if (Array.isArray(value) && value.length > 0 && value.every((a) => typeof a === 'string') && value[0].trim()) {
    return value as string[];
  }
  return [DEFAULT_COMMAND];
}

/** Server settings passed as they are: the server checks each and warns naming the one that is wrong. */
const PASSED_THROUGH = ['provider', 'baseUrl', 'maxTurns', 'thinking', 'maxTokens', 'contextWindow', 'compactThreshold'];

export interface ServerSettings { model?: string; permissionMode?: PermissionMode; [key: string]: unknown }

/** The settings the server reads (PROTOCOL §1); unset ones are left out so the server's defaults apply. */
export function serverSettings(config: SettingsReader): ServerSettings {
  const out: ServerSettings = {};
  const model = config.get<string>('model')?.trim();
  if (model) out.model = model;
  const mode = config.get<PermissionMode>('permissionMode');
  if (mode && PERMISSION_MODES.includes(mode)) out.permissionMode = mode;
  for (const key of PASSED_THROUGH) {
    const value = config.get<unknown>(key);
    if (value === undefined || value === null || (typeof value === 'string' && !value.trim())) continue;
    out[key] = typeof value === 'string' ? value.trim() : value;
  }
  return out;
}

export function permissionMode(config: SettingsReader): PermissionMode {
  return serverSettings(config).permissionMode ?? 'default';
}

/** Where `program` would be found (a path, or a name on PATH), so a missing server is reported as such
 * before the language client tries and fails with a generic message. */
export function findExecutable(program: string, envPath = process.env.PATH ?? '', cwd?: string): string | undefined {
  const exts = process.platform === 'win32' ? ['', ...(process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';')] : [''];
  const bases = program.includes('/') || program.includes(path.sep)
    ? [path.resolve(cwd ?? process.cwd(), program)]
    : envPath.split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, program));
  return bases.flatMap((base) => exts.map((ext) => base + ext)).find((file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  });
}
