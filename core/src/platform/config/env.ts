import { findProperty } from '#definition/validation/canonical-keys.js';
import { configSchema } from './schema.js';

const prefix = 'TRELLIS__';

/**
 * Reads `TRELLIS__Section__Key=value` overrides into a nested object with the schema's key
 * spelling. Keys match case-insensitively; values are coerced to the type the schema expects
 * (JSON for arrays and objects). An empty value unsets the key, so the default applies.
 */
export function readEnvOverrides(env: Record<string, string | undefined>): {
  overrides: Record<string, unknown>;
  problems: string[];
} {
  const overrides: Record<string, unknown> = {};
  const problems: string[] = [];

  for (const [variable, raw] of Object.entries(env).sort(([a], [b]) => a.localeCompare(b))) {
    if (raw === undefined || !variable.toUpperCase().startsWith(prefix)) continue;
    const segments = variable.slice(prefix.length).split('__');
    const path: string[] = [];
    let schema: object = configSchema;
    let unknown = false;
    for (const segment of segments) {
      const property = findProperty(schema, segment);
      if (!property) {
        problems.push(`${variable}: unknown configuration key ${[...path, segment].join('.')}`);
        unknown = true;
        break;
      }
      path.push(property.name);
      schema = property.schema;
    }
    if (unknown) continue;

    const key = path.join('.');
    if (raw === '') {
      setPath(overrides, path, undefined);
      continue;
    }
    const coerced = coerce(raw, schema);
    if ('problem' in coerced) problems.push(`${key}: ${coerced.problem} (from ${variable})`);
    else setPath(overrides, path, coerced.value);
  }
  return { overrides, problems };
}

function coerce(raw: string, schema: { type?: unknown }): { value: unknown } | { problem: string } {
  switch (schema.type) {
    case 'integer':
      return /^-?\d+$/.test(raw.trim()) ? { value: Number(raw) } : { problem: 'must be integer' };
    case 'number': {
      const value = Number(raw);
      return raw.trim() !== '' && Number.isFinite(value)
        ? { value }
        : { problem: 'must be number' };
    }
    case 'boolean': {
      const value = raw.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(value)) return { value: true };
      if (['false', '0', 'no', 'off'].includes(value)) return { value: false };
      return { problem: 'must be boolean (true or false)' };
    }
    case 'array':
    case 'object':
      try {
        return { value: JSON.parse(raw) };
      } catch (error) {
        return { problem: `must be JSON (${(error as Error).message})` };
      }
    default:
      return { value: raw };
  }
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}
