/**
 * Writes the OpenAPI document that TypeSpec emitted as generated/openapi.json and .yaml, with
 * `unevaluatedProperties` rewritten as `additionalProperties`.
 *
 * Why: TypeSpec's 3.1 emitter closes and opens objects with `unevaluatedProperties`, which neither
 * openapi-backend's (draft-07) Ajv nor openapi-typescript understand: the first would accept unknown
 * request fields and the second would type every free JSON object as `Record<string, never>`. Our
 * schemas use no `allOf` composition of objects, so the two keywords mean the same thing here.
 *
 * Usage: tsx scripts/finalize-openapi.ts <emitted openapi.json> <output directory>
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isEmptyObject = (value: Json): boolean =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.keys(value).length === 0;

/** `{not: {}}` (nothing allowed) becomes `false`; any other schema is kept as it is. */
function toAdditionalProperties(schema: Json): Json {
  if (typeof schema === 'object' && schema !== null && !Array.isArray(schema)) {
    const keys = Object.keys(schema);
    if (keys.length === 1 && keys[0] === 'not' && isEmptyObject(schema.not ?? null)) return false;
  }
  return rewrite(schema);
}

function rewrite(node: Json): Json {
  if (Array.isArray(node)) return node.map(rewrite);
  if (typeof node !== 'object' || node === null) return node;
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'unevaluatedProperties') out.additionalProperties = toAdditionalProperties(value);
    else out[key] = rewrite(value);
  }
  return out;
}

const [source, outputDirectory] = process.argv.slice(2);
if (!source || !outputDirectory) {
  console.error('usage: tsx scripts/finalize-openapi.ts <emitted openapi.json> <output directory>');
  process.exit(2);
}
const document = rewrite(JSON.parse(readFileSync(source, 'utf8')) as Json);
writeFileSync(join(outputDirectory, 'openapi.json'), `${JSON.stringify(document, null, 2)}\n`);
writeFileSync(
  join(outputDirectory, 'openapi.yaml'),
  stringify(document, { lineWidth: 0, aliasDuplicateObjects: false }),
);
