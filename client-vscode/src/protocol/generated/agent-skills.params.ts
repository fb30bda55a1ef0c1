/* Generated from schemas/agent-skills.params.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/skills params (none yet).
 */
export interface SkillsParams {}
