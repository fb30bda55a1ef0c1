/* Generated from schemas/agent-skills.result.json by scripts/gen-types.mjs — do not edit. */

export interface SkillsResult {
  skills: SkillInfo[];
}
/**
 * A skill (PROTOCOL §10): every chat is told its name and description; `/<name>` runs it in agent/chat when
 * no command has that name.
 */
export interface SkillInfo {
  description: string;
  name: string;
  source: 'project' | 'user';
}
