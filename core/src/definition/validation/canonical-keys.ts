/**
 * Keys are read case-insensitively (`Name`, `name` and `NAME` are the same key), in workflow
 * definitions and in the configuration alike. Before validation every key the schema knows is
 * renamed to the schema's spelling. The walk follows the schema itself, so a property added to a
 * schema is covered without a change here, and free-form objects (`parameters`, `variables`:
 * user data, schemas without named properties) are left exactly as written. A map whose values
 * have a schema (`inputs`: `unevaluatedProperties` or `additionalProperties`) has its values'
 * keys renamed. Pure (no Node, no Ajv): the console runs it in the browser too.
 */
import type { ValidationProblem } from './describe.js';
import { pointerSegments, toPointer, type PathSegment } from './path.js';

/** The subset of JSON Schema (2020-12 as TypeSpec emits it, TypeBox's) that the walk needs. */
interface SchemaNode {
  $ref?: string;
  type?: string;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  unevaluatedProperties?: SchemaNode | boolean;
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
  /** For each key renamed (by its JSON pointer after renaming), the key as it was written. */
  writtenAs: Map<string, string>;
}

/**
 * Renames keys to the schema's spelling, recursively, wherever the schema names properties.
 * Objects and arrays the schema describes are copied; keys whose value is `undefined` are left
 * out, as JSON would.
 */
export function canonicalizeKeys(value: unknown, schema: object): CanonicalKeys {
  const root = schema as SchemaNode;
  const result: CanonicalKeys = {
    value: undefined,
    problems: [],
    knownKeysAt: new Map(),
    writtenAs: new Map(),
  };
  result.value = walk(value, root, [], root, result);
  return result;
}

/** A path into the renamed value (`/Server/Port`) with its keys as they were written. */
export function writtenPath(
  writtenAs: ReadonlyMap<string, string>,
  path: readonly PathSegment[],
): PathSegment[] {
  return path.map((segment, i) => writtenAs.get(toPointer(path.slice(0, i + 1))) ?? segment);
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
  const rest = restOf(schema);
  if (!isObject(value) || (known.length === 0 && rest === undefined)) return value;

  const byLowerCase = new Map(known.map((key) => [key.toLowerCase(), key]));
  const spellings = new Map<string, string>();
  const entries: Array<[string, unknown]> = [];
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    const canonical = byLowerCase.get(key.toLowerCase());
    if (canonical === undefined) {
      if (known.length > 0) result.knownKeysAt.set(toPointer([...path, key]), known);
      entries.push([key, rest ? walk(item, rest, [...path, key], root, result) : item]);
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
    if (key !== canonical) result.writtenAs.set(toPointer([...path, canonical]), key);
    const property = properties[canonical] as SchemaNode;
    entries.push([canonical, walk(item, property, [...path, canonical], root, result)]);
  }
  // fromEntries defines own properties, so a `__proto__` key stays data (and fails validation).
  return Object.fromEntries(entries);
}

/** The schema of the values of keys `properties` does not name, when it has one. */
function restOf(schema: SchemaNode): SchemaNode | undefined {
  const rest = schema.unevaluatedProperties ?? schema.additionalProperties;
  return isObject(rest) ? rest : undefined;
}

/** Follows local references (`#/$defs/Task`, `#/$defs/Acme.Plot@2.0.0/definitions/point`). */
function dereference(node: SchemaNode, root: SchemaNode): SchemaNode {
  let current = node;
  for (let hops = 0; current.$ref !== undefined && hops < 32; hops++) {
    if (!current.$ref.startsWith('#/')) return {};
    const target = pointerSegments(decodeURIComponent(current.$ref.slice(1))).reduce<unknown>(
      (schema, segment) =>
        typeof schema === 'object' && schema !== null
          ? (schema as Record<string, unknown>)[String(segment)]
          : undefined,
      root,
    );
    if (!isObject(target)) return {};
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
