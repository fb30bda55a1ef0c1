/* Generated from schemas/agent-memoryFile.params.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/memoryFile params (none yet).
 */
export interface MemoryFileParams {}
