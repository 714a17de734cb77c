/**
 * Keys are read case-insensitively (`Name`, `name` and `NAME` are the same key), in workflow
 * definitions and in the configuration alike. Before validation every key the schema knows is
 * renamed to the schema's spelling. The walk follows the schema itself, so a property added to a
 * schema is covered without a change here, and free-form objects (`parameters`, `variables`:
 * user data, schemas without named properties) are left exactly as written.
 */
import type { ValidationProblem } from './describe.js';
import { toPointer, type PathSegment } from './path.js';

/** The subset of JSON Schema (2020-12 as TypeSpec emits it, TypeBox's) that the walk needs. */
interface SchemaNode {
  $ref?: string;
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  $defs?: Record<string, SchemaNode>;
}

export interface CanonicalKeys {
  value: unknown;
  /** Keys given twice in different spellings. */
  problems: ValidationProblem[];
  /** For each key the schema does not know (by JSON pointer), the keys it does know there. */
  knownKeysAt: Map<string, string[]>;
}

/**
 * Renames keys to the schema's spelling, recursively, wherever the schema names properties.
 * Objects and arrays the schema describes are copied; keys whose value is `undefined` are left
 * out, as JSON would.
 */
export function canonicalizeKeys(value: unknown, schema: object): CanonicalKeys {
  const root = schema as SchemaNode;
  const result: CanonicalKeys = { value: undefined, problems: [], knownKeysAt: new Map() };
  result.value = walk(value, root, [], root, result);
  return result;
}

/** The property of an object schema that `key` names, matched case-insensitively. */
export function findProperty(
  schema: object,
  key: string,
): { name: string; schema: object } | undefined {
  const properties = (schema as SchemaNode).properties ?? {};
  const lower = key.toLowerCase();
  const name = Object.keys(properties).find((candidate) => candidate.toLowerCase() === lower);
  return name === undefined ? undefined : { name, schema: properties[name]! };
}

function walk(
  value: unknown,
  node: SchemaNode,
  path: PathSegment[],
  root: SchemaNode,
  result: CanonicalKeys,
): unknown {
  const schema = dereference(node, root);
  if (schema.anyOf) {
    const branch = schema.anyOf.map((b) => dereference(b, root)).find((b) => accepts(b, value));
    return branch ? walk(value, branch, path, root, result) : value;
  }
  if (Array.isArray(value)) {
    const items = schema.items;
    return items ? value.map((item, i) => walk(item, items, [...path, i], root, result)) : value;
  }
  const properties = schema.properties ?? {};
  const known = Object.keys(properties);
  if (!isObject(value) || known.length === 0) return value;

  const byLowerCase = new Map(known.map((key) => [key.toLowerCase(), key]));
  const spellings = new Map<string, string>();
  const entries: Array<[string, unknown]> = [];
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    const canonical = byLowerCase.get(key.toLowerCase());
    if (canonical === undefined) {
      result.knownKeysAt.set(toPointer([...path, key]), known);
      entries.push([key, item]);
      continue;
    }
    const earlier = spellings.get(canonical);
    if (earlier !== undefined) {
      result.problems.push({
        path: [...path, canonical],
        problem: `given twice, as '${earlier}' and '${key}' (keys are case-insensitive)`,
      });
      continue;
    }
    spellings.set(canonical, key);
    const property = properties[canonical] as SchemaNode;
    entries.push([canonical, walk(item, property, [...path, canonical], root, result)]);
  }
  // fromEntries defines own properties, so a `__proto__` key stays data (and fails validation).
  return Object.fromEntries(entries);
}

function dereference(node: SchemaNode, root: SchemaNode): SchemaNode {
  let current = node;
  for (let hops = 0; current.$ref !== undefined && hops < 32; hops++) {
    const name = current.$ref.startsWith('#/$defs/') ? current.$ref.slice('#/$defs/'.length) : null;
    const target = name === null ? undefined : root.$defs?.[name];
    if (target === undefined) return {};
    current = target;
  }
  return current;
}

/** Whether a union branch is meant for this value (by its JSON type only). */
function accepts(branch: SchemaNode, value: unknown): boolean {
  switch (branch.type) {
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    default:
      return false;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
