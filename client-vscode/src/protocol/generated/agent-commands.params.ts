/* Generated from schemas/agent-commands.params.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/commands params (none yet).
 */
export interface CommandsParams {}
