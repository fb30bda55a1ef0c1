import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DISMISS, JUMP_OR_APPLY, NEXT_EDITS_ENABLED_KEY, SHOWN_CONTEXT, TOGGLE_NEXT_EDITS } from './nextEdits';
import { ENABLED_KEY, STATS_COMMAND, TOGGLE_COMMAND } from './suggestions';

const ROOT = path.resolve(__dirname, '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

describe('the first-run walkthrough', () => {
  const [walkthrough] = manifest.contributes.walkthroughs;
  const commands = new Set(manifest.contributes.commands.map((c: { command: string }) => c.command));
  const settings = new Set(Object.keys(manifest.contributes.configuration.properties));

  it('sets the key, chooses the model, tries the demo: each step with its page and a way to complete it', () => {
    expect(walkthrough.steps.map((s: { id: string }) => s.id)).toEqual(['key', 'model', 'demo']);
    for (const step of walkthrough.steps) {
      expect(fs.existsSync(path.join(ROOT, step.media.markdown)), step.media.markdown).toBe(true);
      for (const event of step.completionEvents as string[]) {
        const [kind, name] = event.split(':');
        expect(kind === 'onCommand' ? commands.has(name) : settings.has(name), event).toBe(true);
      }
      for (const [, command] of (step.description as string).matchAll(/\(command:([\w.]+)/g)) {
        expect(command.startsWith('workbench.') || commands.has(command), command).toBe(true);
      }
    }
  });

  it('never asks for the key in settings.json', () => {
    expect(settings.has('agentLsp.apiKey')).toBe(false);
    expect(walkthrough.steps[0].description).toContain('[Set API Key](command:agentLsp.setApiKey)');
  });
});

describe('suggestions as you type in the manifest', () => {
  const commands = new Map(manifest.contributes.commands.map((c: { command: string; title: string }) => [c.command, c.title]));
  const settings = manifest.contributes.configuration.properties;

  it('contributes the toggle and the statistics commands, and the setting the toggle writes (a boolean, on by default)', () => {
    expect(commands.get(TOGGLE_COMMAND)).toBe('Toggle Suggestions');
    expect(commands.get(STATS_COMMAND)).toBe('Show Suggestion Statistics');
    expect(settings[`agentLsp.${ENABLED_KEY}`]).toMatchObject({ type: 'boolean', default: true });
  });
});

describe('next-edit suggestions in the manifest', () => {
  const commands = new Map(manifest.contributes.commands.map((c: { command: string; title: string }) => [c.command, c.title]));

  it('binds Tab and Escape only while an edit is shown, never beside ghost text or the suggest widget', () => {
    const bound = manifest.contributes.keybindings.filter((k: { command: string }) => [JUMP_OR_APPLY, DISMISS].includes(k.command));
    expect(bound.map((k: { command: string; key: string }) => [k.command, k.key])).toEqual([[JUMP_OR_APPLY, 'tab'], [DISMISS, 'escape']]);
    for (const k of bound) {
      const terms = (k.when as string).split(' && ');
      expect(terms).toEqual(expect.arrayContaining([SHOWN_CONTEXT, 'editorTextFocus', '!inlineSuggestionVisible', '!suggestWidgetVisible']));
    }
  });

  it('contributes the toggle and the setting it writes (a boolean, on by default)', () => {
    expect(commands.get(TOGGLE_NEXT_EDITS)).toBe('Toggle Next-Edit Suggestions');
    expect(manifest.contributes.configuration.properties[`agentLsp.${NEXT_EDITS_ENABLED_KEY}`]).toMatchObject({ type: 'boolean', default: true });
  });
});
