// Generates src/protocol/generated/*.ts from the server's JSON Schemas (../schemas/*.json, one per message
// family, made from the server's pydantic models) so the extension's types cannot drift from the wire.
// `--check` regenerates in memory and fails if a committed file differs (run by ci.sh).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';

const here = path.dirname(fileURLToPath(import.meta.url));
const schemaDir = path.resolve(here, '../../schemas');
const outDir = path.resolve(here, '../src/protocol/generated');
const check = process.argv.includes('--check');

/** Pydantic gives every property a title ("Toolcallid"); json-schema-to-typescript would turn each into a
 * named alias. Keep titles only on the root and on $defs entries, which name real types. */
function stripPropertyTitles(node, keep) {
  if (Array.isArray(node)) return node.map((n) => stripPropertyTitles(n, false));
  if (!node || typeof node !== 'object') return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'title' && !keep) continue;
    if (key === '$defs' || key === 'properties') {  // maps of name → schema: names are not keywords
      const named = key === '$defs';
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stripPropertyTitles(v, named)]));
    } else out[key] = stripPropertyTitles(value, false);
  }
  return out;
}

const files = fs.readdirSync(schemaDir).filter((f) => f.endsWith('.json')).sort();
const stale = [];
fs.mkdirSync(outDir, { recursive: true });
for (const file of files) {
  const schema = stripPropertyTitles(JSON.parse(fs.readFileSync(path.join(schemaDir, file), 'utf8')), true);
  const ts = await compile(schema, schema.title, {
    additionalProperties: false,
    bannerComment: `/* Generated from schemas/${file} by scripts/gen-types.mjs — do not edit. */`,
    format: true,
    style: { singleQuote: true, printWidth: 110 },
  });
  const target = path.join(outDir, file.replace(/\.json$/, '.ts'));
  if (check) {
    if (!fs.existsSync(target) || fs.readFileSync(target, 'utf8') !== ts) stale.push(path.basename(target));
  } else fs.writeFileSync(target, ts);
}
const expected = new Set(files.map((f) => f.replace(/\.json$/, '.ts')));
const extra = fs.readdirSync(outDir).filter((f) => !expected.has(f));
if (check) {
  if (stale.length || extra.length) {
    console.error(`generated types are stale: ${[...stale, ...extra].join(', ')} — run npm run gen:types`);
    process.exit(1);
  }
  console.log(`generated types match ${files.length} schemas`);
} else {
  for (const f of extra) fs.rmSync(path.join(outDir, f));
  console.log(`wrote ${files.length} files to src/protocol/generated/`);
}
