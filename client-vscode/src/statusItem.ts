/**
 * The Agent status bar item's look: the server's state and, once the agent has had a language answer, how much
 * the index of the language server behind it knew (PROTOCOL §11). Every language tool's answer ends with the line
 * `index: ready | loading | stale | unknown — why`, which the completed tool call's `output` carries; the last
 * one seen is shown. No VS Code here, so unit tests check it as plain data.
 */
import type { ServerState } from './messages';
import type { AgentUpdate } from './protocol';

export const INDEX_STATES = ['ready', 'loading', 'stale', 'unknown'] as const;
export interface IndexStatus { state: typeof INDEX_STATES[number]; why: string }

/** The item's look per server state (its accessible label is what the end-to-end test waits for). */
const STATUS: Record<ServerState['state'], [string, string]> = {
  starting: ['$(loading~spin) Agent', 'starting'], restarting: ['$(loading~spin) Agent', 'restarting'],
  ready: ['$(comment-discussion) Agent', 'ready'], missing: ['$(error) Agent', 'not installed'],
  failed: ['$(error) Agent', 'failed'], crashed: ['$(error) Agent', 'stopped'],
};

/** The `index:` line ending a tool's output (a language answer's last line), parsed; undefined when it has none. */
export function indexOf(output: string | null | undefined): IndexStatus | undefined {
  const m = /^index: (\w+) — (.+)$/.exec((output ?? '').trimEnd().split('\n').at(-1) ?? '');
  return m && (INDEX_STATES as readonly string[]).includes(m[1]) ? { state: m[1] as IndexStatus['state'], why: m[2] } : undefined;
}

/** What a completed tool call says of the index (a language answer); undefined for any other update. */
export function indexFrom(update: AgentUpdate): IndexStatus | undefined {
  return update.kind === 'tool_call_update' && update.status === 'completed' ? indexOf(update.output) : undefined;
}

export interface StatusLook { text: string; tooltip: string; label: string }

/** The item for `server`, with `index` (the agent's last language answer's) while the server is ready. */
export function statusLook(server: ServerState, index?: IndexStatus): StatusLook {
  const [text, what] = STATUS[server.state];
  const tooltip = 'message' in server ? server.message : `Agent LSP: ${what}`;
  if (server.state !== 'ready' || !index) return { text, tooltip, label: `Agent LSP: ${what}` };
  return {
    text: `${text} · index ${index.state}`,
    tooltip: `${tooltip}\nindex: ${index.state} — ${index.why} (the agent's last language answer)`,
    label: `Agent LSP: ${what}, index ${index.state}`,
  };
}
