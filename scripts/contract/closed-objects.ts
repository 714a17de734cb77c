/**
 * TypeSpec's JSON Schema 2020-12 output closes and opens objects with `unevaluatedProperties`,
 * which neither draft-07 tools (openapi-backend's Ajv) nor the TypeScript generators
 * (openapi-typescript, json-schema-to-typescript) understand: the first would accept unknown
 * fields and the others would type every free JSON object as `Record<string, never>`. Our schemas
 * use no `allOf` composition of objects, so the two keywords mean the same thing here.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

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
  return withAdditionalProperties(schema);
}

/** A copy of a schema (or document) with every `unevaluatedProperties` as `additionalProperties`. */
export function withAdditionalProperties(node: Json): Json {
  if (Array.isArray(node)) return node.map(withAdditionalProperties);
  if (typeof node !== 'object' || node === null) return node;
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'unevaluatedProperties') out.additionalProperties = toAdditionalProperties(value);
    else out[key] = withAdditionalProperties(value);
  }
  return out;
}
