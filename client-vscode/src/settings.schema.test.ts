/**
 * The extension's own checks of the server's settings stay the server's: each key it sends is a setting of
 * schemas/settings.json (generated from the server's config), with the same choices and bounds, and each such key
 * is contributed to VS Code's Settings UI with the same constraints.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVER_SETTING_KEYS, serverSettings } from './settings';

type Property = {
  type?: string; enum?: unknown[]; minimum?: number; maximum?: number;
  anyOf?: Property[]; properties?: Record<string, Property>; $ref?: string;
};
const schema = JSON.parse(fs.readFileSync(path.join(__dirname, '../../schemas/settings.json'), 'utf8')) as {
  properties: Record<string, Property>; $defs?: Record<string, Property>;
};
/** A property as its `$ref` names it (`#/$defs/X`), and an optional value's `anyOf: [X, null]` read as X. */
const resolved = (p: Property | undefined): Property | undefined => {
  const target = p?.$ref ? schema.$defs?.[p.$ref.replace('#/$defs/', '')] : p;
  return target?.anyOf?.find((a) => a.type !== 'null') ?? target;
};
/** The schema of `key`, a dotted path for a nested one (`completions.maxLines`). */
const propertyOf = (key: string): Property | undefined =>
  key.split('.').reduce<Property | undefined>((p, k) => resolved(p?.properties?.[k]), { properties: schema.properties });
const contributed = JSON.parse(fs.readFileSync(path.join(__dirname, '../package.json'), 'utf8')).contributes.configuration
  .properties as Record<string, Property>;
const accepts = (key: string, value: unknown) => {
  const { settings, warnings } = serverSettings({ get: <T>(k: string) => (k === key ? (value as T) : undefined) });
  const sent = key.split('.').reduce<unknown>((s, k) => (s as Record<string, unknown> | undefined)?.[k], settings);
  return warnings.length === 0 && sent !== undefined;
};

describe('server settings against schemas/settings.json', () => {
  it.each(SERVER_SETTING_KEYS)('%s is a setting of the server, checked the same way', (key) => {
    const property = propertyOf(key) as Property;
    expect(property, `${key} is not in schemas/settings.json`).toBeDefined();
    if (property.enum) {
      for (const option of property.enum) expect(accepts(key, option)).toBe(true);
      expect(accepts(key, 'not-an-option')).toBe(false);
    }
    if (property.type === 'integer' || property.type === 'number') {
      expect(accepts(key, property.minimum)).toBe(true);
      expect(accepts(key, property.maximum)).toBe(true);
      expect(accepts(key, (property.minimum as number) - 1)).toBe(false);
      expect(accepts(key, (property.maximum as number) + 1)).toBe(false);
    }
    if (property.type === 'boolean') {
      expect(accepts(key, true) && accepts(key, false)).toBe(true);
      expect(accepts(key, 'yes')).toBe(false);
    }
    const ui = contributed[`agentLsp.${key}`];
    expect(ui, `agentLsp.${key} is not contributed in package.json`).toBeDefined();
    if (property.enum && ui.enum) expect(ui.enum.filter((v) => v !== '')).toEqual(property.enum);
    if (ui.minimum !== undefined) expect(ui.minimum).toBe(property.minimum);
    if (ui.maximum !== undefined) expect(ui.maximum).toBe(property.maximum);
  });
});
