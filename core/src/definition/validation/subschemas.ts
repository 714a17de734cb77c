/**
 * Rewriting JSON Schemas by their subschemas: the keywords of draft-07 (the plugin schemas'
 * draft) that hold schemas, so that a rewrite never mistakes data (a property named `items`, an
 * `enum` value with a `$ref` key) for a schema.
 */

/** A JSON Schema: an object, or `true`/`false`. */
export type Schema = { [keyword: string]: unknown } | boolean;

/** Keywords holding one subschema (`items` also holds a list). */
const SINGLE = [
  'additionalProperties',
  'items',
  'additionalItems',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'not',
] as const;
/** Keywords holding a list of subschemas. */
const LISTS = ['allOf', 'anyOf', 'oneOf', 'items'] as const;
/** Keywords holding subschemas by name (`dependencies` may also hold lists of names). */
const MAPS = ['properties', 'patternProperties', 'definitions', '$defs', 'dependencies'] as const;

export type SubschemaKeyword =
  (typeof SINGLE)[number] | (typeof LISTS)[number] | (typeof MAPS)[number];

/**
 * A shallow copy of `schema` with each direct subschema replaced by `map(subschema, keyword)`;
 * everything else (annotations, `enum` and `const` data, `dependencies` name lists) is kept.
 */
export function mapSubschemas(
  schema: Schema,
  map: (subschema: Schema, keyword: SubschemaKeyword) => Schema,
): Schema {
  if (!isObject(schema)) return schema;
  const out = { ...schema };
  for (const keyword of SINGLE) {
    const value = out[keyword];
    if (isSchema(value)) out[keyword] = map(value, keyword);
  }
  for (const keyword of LISTS) {
    const value = out[keyword];
    if (Array.isArray(value)) {
      out[keyword] = value.map((item: unknown) => (isSchema(item) ? map(item, keyword) : item));
    }
  }
  for (const keyword of MAPS) {
    const value = out[keyword];
    if (isObject(value)) {
      out[keyword] = Object.fromEntries(
        Object.entries(value).map(([name, item]) => [
          name,
          isSchema(item) ? map(item, keyword) : item,
        ]),
      );
    }
  }
  return out;
}

export function isObject(value: unknown): value is { [keyword: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'boolean' || isObject(value);
}
