/* Generated from schemas/agent-models.params.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/models params (none yet).
 */
export interface ModelsParams {}
