/**
 * What the served definition schema (`/schemas/workflow-definition.json`) says about a place in a
 * definition: the keys an object there takes and their descriptions, the installed plugins, and
 * each plugin's parameter schema (embedded by the server under `$defs`, chosen by an `if` on the
 * task's plugin). The editor's completion, hover help and unknown-plugin check read it here.
 */
import type { PathSegment } from '../../core/src/definition/validation/path.js';
import { field } from './definition.js';

type Schema = Record<string, unknown>;

const isObject = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A key an object takes, with the schema's description of it. */
export interface KnownKey {
  name: string;
  description: string;
}

/** The plugin types installed when the schema was served (the examples of `type.plugin`). */
export function installedPlugins(root: Schema): string[] {
  const defs = isObject(root.$defs) ? root.$defs : {};
  const plugin = field(field(field(defs, 'PluginReference'), 'properties'), 'plugin');
  const examples = field(plugin, 'examples');
  return Array.isArray(examples) ? examples.filter((item) => typeof item === 'string') : [];
}

/** The installed spelling of `plugin` (matched case-insensitively, as the server does), or null. */
export function installedPlugin(root: Schema, plugin: string): string | null {
  const lower = plugin.toLowerCase();
  return installedPlugins(root).find((type) => type.toLowerCase() === lower) ?? null;
}

/** The parameter schema of the latest installed version of `plugin`; null when none is known. */
export function parameterSchema(root: Schema, plugin: string): Schema | null {
  const conditions = field(field(root.$defs, 'TaskDefinition'), 'allOf');
  if (!Array.isArray(conditions)) return null;
  for (const condition of conditions) {
    const type = field(field(field(condition, 'if'), 'properties'), 'type');
    const properties = field(type, 'properties');
    if (field(properties, 'version') !== undefined) continue;
    const pattern = field(field(properties, 'plugin'), 'pattern');
    if (typeof pattern !== 'string' || !new RegExp(pattern).test(plugin)) continue;
    const parameters = field(field(field(condition, 'then'), 'properties'), 'parameters');
    return isObject(parameters) ? resolve(root, parameters) : null;
  }
  return null;
}

/** The plugin a definition's task names (`tasks[index].type.plugin`), or null. */
export function pluginOfTask(definition: unknown, index: number): string | null {
  const tasks = field(definition, 'tasks');
  const plugin = field(field(Array.isArray(tasks) ? tasks[index] : undefined, 'type'), 'plugin');
  return typeof plugin === 'string' ? plugin : null;
}

/**
 * The keys the object at `path` of `definition` takes, as the schema spells them, in its order;
 * inside a task's `parameters`, those of its plugin's parameter schema. Empty when the schema
 * says nothing of the place (or allows any key there).
 */
export function knownKeysAt(
  root: Schema,
  path: readonly PathSegment[],
  definition: unknown,
): KnownKey[] {
  const keys = new Map<string, string>();
  for (const schema of schemasAt(root, path, definition)) {
    const properties = schema.properties;
    if (!isObject(properties)) continue;
    for (const [name, property] of Object.entries(properties)) {
      if (keys.has(name)) continue;
      keys.set(name, isObject(property) ? descriptionOf(root, property) : '');
    }
  }
  return [...keys].map(([name, description]) => ({ name, description }));
}

/** The schema's description of the key `key` of the object at `path`, or null. */
export function describeKey(
  root: Schema,
  path: readonly PathSegment[],
  key: string,
  definition: unknown,
): string | null {
  const lower = key.toLowerCase();
  const known = knownKeysAt(root, path, definition).find(
    ({ name }) => name.toLowerCase() === lower,
  );
  return known && known.description !== '' ? known.description : null;
}

/** Every subschema (refs resolved, union branches included) of the value at `path`. */
function schemasAt(root: Schema, path: readonly PathSegment[], definition: unknown): Schema[] {
  const [first, index, third, ...rest] = path;
  if (first === 'tasks' && typeof index === 'number' && third === 'parameters') {
    const plugin = pluginOfTask(definition, index);
    const parameters = plugin === null ? null : parameterSchema(root, plugin);
    return parameters === null ? [] : walk(root, [parameters], rest);
  }
  return walk(root, [root], path);
}

function walk(root: Schema, start: Schema[], path: readonly PathSegment[]): Schema[] {
  let schemas = start.flatMap((schema) => expand(root, schema));
  for (const segment of path) {
    const next: Schema[] = [];
    for (const schema of schemas) {
      if (typeof segment === 'number') {
        const prefix: unknown = Array.isArray(schema.prefixItems)
          ? schema.prefixItems[segment]
          : undefined;
        const item = isObject(prefix) ? prefix : schema.items;
        if (isObject(item)) next.push(item);
        continue;
      }
      const lower = segment.toLowerCase();
      const properties = isObject(schema.properties) ? schema.properties : {};
      const name = Object.keys(properties).find((key) => key.toLowerCase() === lower);
      const property = name === undefined ? schema.additionalProperties : properties[name];
      if (isObject(property)) next.push(property);
    }
    schemas = next.flatMap((schema) => expand(root, schema));
  }
  return schemas;
}

/** The schema with its `$ref` target and the branches of its unions, each once. */
function expand(root: Schema, schema: Schema, seen = new Set<Schema>()): Schema[] {
  if (seen.has(schema)) return [];
  seen.add(schema);
  const found = [schema];
  if (typeof schema.$ref === 'string') {
    const target = resolve(root, schema);
    if (target !== schema) found.push(...expand(root, target, seen));
  }
  for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
    const branches = schema[keyword];
    if (!Array.isArray(branches)) continue;
    for (const branch of branches) if (isObject(branch)) found.push(...expand(root, branch, seen));
  }
  return found;
}

/** The schema a local `$ref` (`#/$defs/...`) points at; the schema itself without one. */
function resolve(root: Schema, schema: Schema): Schema {
  const reference = schema.$ref;
  if (typeof reference !== 'string' || !reference.startsWith('#')) return schema;
  let target: unknown = root;
  for (const raw of reference.slice(2).split('/')) {
    if (raw === '') continue;
    const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    target = isObject(target) ? target[key] : undefined;
  }
  return isObject(target) ? target : schema;
}

/** A property's own description, or its `$ref` target's. */
function descriptionOf(root: Schema, property: Schema): string {
  if (typeof property.description === 'string') return property.description;
  const target = resolve(root, property);
  return typeof target.description === 'string' ? target.description : '';
}
