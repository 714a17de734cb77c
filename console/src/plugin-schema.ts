/**
 * A plugin's JSON Schemas (its task parameters, its output) as rows a person reads: each property
 * with its type, whether it is required, what it means and its default, nested objects' properties
 * under dotted names (`body.text`).
 */

/** One property of a schema, as the catalog lists it. */
export interface SchemaRow {
  /** The property's path: `url`, `retry.count`. */
  name: string;
  /** Its type in words: `string`, `integer or string`, `one of "GET", "POST"`, `array of string`. */
  type: string;
  required: boolean;
  description: string;
  /** The default as JSON, or null when there is none. */
  default: string | null;
}

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A schema's type in words. */
export function typeOf(schema: unknown): string {
  if (!isSchema(schema)) return schema === false ? 'nothing' : 'any';
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) {
    return `one of ${schema.enum.map((value) => JSON.stringify(value)).join(', ')}`;
  }
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(alternatives)) return alternatives.map(typeOf).join(' or ');
  const types: unknown[] = Array.isArray(schema.type)
    ? schema.type
    : schema.type
      ? [schema.type]
      : [];
  if (types.length === 0) return isSchema(schema.properties) ? 'object' : 'any';
  return types
    .map((type) =>
      type === 'array' && schema.items !== undefined
        ? `array of ${typeOf(schema.items)}`
        : String(type),
    )
    .join(' or ');
}

/** The rows of an object schema's properties, nested objects' properties after their own row. */
export function schemaRows(schema: unknown, prefix = ''): SchemaRow[] {
  if (!isSchema(schema) || !isSchema(schema.properties)) return [];
  const required = Array.isArray(schema.required) ? schema.required : [];
  return Object.entries(schema.properties).flatMap(([key, property]) => {
    const name = prefix + key;
    const row: SchemaRow = {
      name,
      type: typeOf(property),
      required: required.includes(key),
      description:
        isSchema(property) && typeof property.description === 'string' ? property.description : '',
      default:
        isSchema(property) && 'default' in property ? JSON.stringify(property.default) : null,
    };
    return [row, ...schemaRows(property, `${name}.`)];
  });
}

/** Whether the schema says nothing (`{}`): any value is taken. */
export const saysNothing = (schema: unknown) =>
  isSchema(schema) && Object.keys(schema).length === 0;
