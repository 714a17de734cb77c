/**
 * A nullable reference to a scalar (`Uuid | null`: `anyOf: [{$ref: Uuid}, {type: 'null'}]`) with
 * the scalar's schema written in place of the reference. openapi-generator's `python` types the
 * reference as the bare scalar and refuses the null a nullable id holds, where it reads an
 * inline scalar with `null` as optional. References to enums and objects stay: it reads those.
 */
import type { Json } from './closed-objects.js';

type JsonObject = { [key: string]: Json };

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const scalarTypes = new Set(['string', 'number', 'integer', 'boolean']);

/** The scalar schema a `$ref` names, without its description (the property keeps its own). */
function scalarOf(schemas: JsonObject, branch: Json): JsonObject | null {
  if (!isObject(branch) || typeof branch.$ref !== 'string') return null;
  const named = schemas[branch.$ref.replace('#/components/schemas/', '')];
  if (!isObject(named) || typeof named.type !== 'string' || !scalarTypes.has(named.type)) {
    return null;
  }
  if (named.enum !== undefined) return null;
  const { description: _description, ...scalar } = named;
  return scalar;
}

const isNull = (branch: Json): boolean =>
  isObject(branch) && branch.type === 'null' && Object.keys(branch).length === 1;

/** A copy of the document with every nullable reference to a scalar inlined. */
export function withNullableScalarsInlined(document: Json): Json {
  const components = isObject(document) && isObject(document.components) ? document.components : {};
  const schemas = isObject(components.schemas) ? components.schemas : {};
  const inline = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(inline);
    if (!isObject(node)) return node;
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(node)) out[key] = inline(value);
    const { anyOf } = out;
    if (Array.isArray(anyOf) && anyOf.length === 2 && anyOf.some(isNull)) {
      out.anyOf = anyOf.map((branch) => scalarOf(schemas, branch) ?? branch);
    }
    return out;
  };
  return inline(document);
}
