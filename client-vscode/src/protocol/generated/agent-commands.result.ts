/* Generated from schemas/agent-commands.result.json by scripts/gen-types.mjs — do not edit. */

export interface CommandsResult {
  commands: CommandInfo[];
}
/**
 * A slash command the user can run as `/<name> arguments` in agent/chat.
 */
export interface CommandInfo {
  argumentHint?: string | null;
  description: string;
  name: string;
  source: 'builtin' | 'project' | 'user';
}
