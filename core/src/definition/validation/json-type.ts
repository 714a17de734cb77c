/** The value types a declared input or a plugin setting may name. */
export type JsonTypeName = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array';

/** Whether a JSON value is of the named type (`number` excludes NaN and infinities). */
export function isOfJsonType(type: JsonTypeName, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
  }
}
