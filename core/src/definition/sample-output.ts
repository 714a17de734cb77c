/**
 * A value that fits a plugin's output schema, for a dry run's task that has no mock and no
 * recorded output. Deterministic (the same schema gives the same value, so two dry runs read
 * alike) and plain: the schema's `const`, `default` or first `examples`/`enum` value where it
 * has one, else the least value of its type within its bounds. Covers what manifests write
 * (types, properties, items, `anyOf`/`oneOf`/`allOf`, string formats, bounds); a schema it
 * cannot read (a `$ref`, a `pattern`) gives its plainest value, which may not fit it.
 */

type Schema = Record<string, unknown>;

const FORMAT_SAMPLES: Record<string, string> = {
  'date-time': '1970-01-01T00:00:00.000Z',
  date: '1970-01-01',
  time: '00:00:00Z',
  email: 'user@example.com',
  hostname: 'example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-0000-0000-000000000000',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
};

/** Nesting past this depth gives null: a recursive schema still ends. */
const MAX_DEPTH = 16;

/** A value for `schema` (any JSON Schema a manifest gives as `output`). */
export function sampleOutput(schema: unknown): unknown {
  return sample(schema, 0);
}

function sample(schema: unknown, depth: number): unknown {
  if (!isSchema(schema) || depth > MAX_DEPTH) return null;
  if ('const' in schema) return schema.const;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) {
      return sample({ ...withoutKey(schema, key), ...(branches[0] as Schema) }, depth + 1);
    }
  }
  if (Array.isArray(schema.allOf)) {
    const merged = (schema.allOf as unknown[]).filter(isSchema).reduce<Schema>(
      (all, part) => ({
        ...all,
        ...part,
        properties: { ...(all.properties as Schema), ...(part.properties as Schema) },
        required: [...((all.required as string[]) ?? []), ...((part.required as string[]) ?? [])],
      }),
      withoutKey(schema, 'allOf'),
    );
    return sample(merged, depth + 1);
  }
  switch (typeOf(schema)) {
    case 'object':
      return objectSample(schema, depth);
    case 'array':
      return arraySample(schema, depth);
    case 'string':
      return stringSample(schema);
    case 'integer':
      return numberSample(schema, true);
    case 'number':
      return numberSample(schema, false);
    case 'boolean':
      return false;
    default:
      return null;
  }
}

/** The schema's type; of a list of types, the first that is not null; guessed from keywords. */
function typeOf(schema: Schema): string | undefined {
  const { type } = schema;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) {
    return (type.find((each) => each !== 'null') as string | undefined) ?? 'null';
  }
  if ('properties' in schema || 'required' in schema) return 'object';
  if ('items' in schema) return 'array';
  return undefined;
}

function objectSample(schema: Schema, depth: number): Record<string, unknown> {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const value: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    value[name] = sample(property, depth + 1);
  }
  // A required property the schema does not describe is present, with the plainest value.
  for (const name of Array.isArray(schema.required) ? (schema.required as string[]) : []) {
    if (!(name in value)) value[name] = null;
  }
  return value;
}

function arraySample(schema: Schema, depth: number): unknown[] {
  const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
  const max = typeof schema.maxItems === 'number' ? schema.maxItems : Infinity;
  // One item, where the bounds allow it: later tasks' expressions have an element to read.
  const count = Math.min(Math.max(min, 1), max);
  const items = Array.isArray(schema.prefixItems) ? (schema.prefixItems as unknown[]) : [];
  return Array.from({ length: count }, (_, index) =>
    sample(items[index] ?? schema.items, depth + 1),
  );
}

function stringSample(schema: Schema): string {
  const format = typeof schema.format === 'string' ? FORMAT_SAMPLES[schema.format] : undefined;
  if (format !== undefined) return format;
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  const text = 'sample'.padEnd(min, '-');
  return text.slice(0, Math.max(min, Math.min(text.length, max)));
}

function numberSample(schema: Schema, integer: boolean): number {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema;
  let value = 0;
  if (typeof minimum === 'number') value = minimum;
  if (typeof exclusiveMinimum === 'number') value = exclusiveMinimum + (integer ? 1 : 0.5);
  if (typeof maximum === 'number' && value > maximum) value = maximum;
  if (typeof exclusiveMaximum === 'number' && value >= exclusiveMaximum) {
    value = exclusiveMaximum - (integer ? 1 : 0.5);
  }
  return integer ? Math.ceil(value) : value;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function withoutKey(schema: Schema, key: string): Schema {
  const { [key]: _omitted, ...rest } = schema;
  return rest;
}
