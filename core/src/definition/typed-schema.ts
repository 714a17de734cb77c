/**
 * The workflow definition JSON Schema for editors (`GET /schemas/workflow-definition.json`): the
 * schema emitted from spec/definition/, with each task's `parameters` typed by the parameter
 * schema of its plugin, for the plugins installed now, so that an editor completes parameter
 * names and flags a misspelled or mistyped one before the definition is sent. Where a value is
 * typed, an expression string is accepted too, as the server does (`parameters.ts`).
 */
import semver from 'semver';
import definitionSchema from '../../../generated/workflow-definition.schema.json' with { type: 'json' };
import type { JsonSchema } from '@trellis/plugin-kit';
import { isObject, mapSubschemas, type Schema } from './validation/subschemas.js';
import { acceptingExpressions } from './parameters.js';

/** An installed plugin version, as far as its parameters go. */
export interface PluginParameters {
  type: string;
  version: string;
  parametersSchema: JsonSchema;
}

/**
 * The definition schema (JSON Schema 2020-12) with `TaskDefinition` constrained, per installed
 * plugin version, by `if type.plugin is X (and type.version is V, or absent for the latest) then
 * parameters is X's schema`. Plugin schemas (draft-07) are embedded under `$defs`, converted to
 * 2020-12. Deterministic for the same plugins in any order.
 */
export function typedDefinitionSchema(plugins: readonly PluginParameters[]): JsonSchema {
  const schema = structuredClone(definitionSchema) as JsonSchema;
  const defs = schema.$defs as Record<string, JsonSchema>;
  const task = defs.TaskDefinition!;
  const conditions: JsonSchema[] = [];
  const byType = new Map<string, PluginParameters[]>();
  for (const plugin of [...plugins].sort(byTypeThenVersion)) {
    byType.set(plugin.type, [...(byType.get(plugin.type) ?? []), plugin]);
  }
  for (const [type, versions] of byType) {
    for (const plugin of versions) {
      const name = `${type.replace('/', '.')}@${plugin.version}`;
      defs[name] = embedded(acceptingExpressions(plugin.parametersSchema), `#/$defs/${name}`);
      const parameters = { $ref: `#/$defs/${name}` };
      const required = hasRequired(plugin.parametersSchema);
      conditions.push(when(type, plugin.version, parameters, required));
      if (plugin === versions.at(-1)) conditions.push(when(type, undefined, parameters, required));
    }
  }
  if (conditions.length > 0) task.allOf = conditions;
  const reference = defs.PluginReference!;
  const pluginProperty = (reference.properties as Record<string, JsonSchema>).plugin!;
  pluginProperty.examples = [...byType.keys()];
  schema.description = `${String(schema.description)} Task parameters are typed by the plugins installed when this schema was served.`;
  return schema;
}

/** `if` the task names this plugin (and version, or none) `then` its parameters are typed. */
function when(
  type: string,
  version: string | undefined,
  parameters: JsonSchema,
  required: boolean,
): JsonSchema {
  const plugin: JsonSchema = {
    type: 'object',
    required: version === undefined ? ['plugin'] : ['plugin', 'version'],
    properties: {
      plugin: { type: 'string', pattern: caseInsensitive(type) },
      ...(version === undefined ? {} : { version: { const: version } }),
    },
    ...(version === undefined ? { not: { required: ['version'] } } : {}),
  };
  return {
    if: { required: ['type'], properties: { type: plugin } },
    then: {
      ...(required ? { required: ['parameters'] } : {}),
      properties: { parameters },
    },
  };
}

/** Types are matched case-insensitively, as the server matches them: `^[Nn][Ee][Tt]/...$`. */
function caseInsensitive(type: string): string {
  const letters = [...type].map((c) => {
    const lower = c.toLowerCase();
    const upper = c.toUpperCase();
    if (lower !== upper) return `[${upper}${lower}]`;
    return /[.*+?^${}()|[\]\\/-]/.test(c) ? `\\${c}` : c;
  });
  return `^${letters.join('')}$`;
}

function hasRequired(schema: JsonSchema): boolean {
  return Array.isArray(schema.required) && schema.required.length > 0;
}

function byTypeThenVersion(a: PluginParameters, b: PluginParameters): number {
  return a.type.localeCompare(b.type, 'en') || semver.compare(a.version, b.version);
}

/**
 * A plugin's draft-07 schema as a 2020-12 subschema at `location`: tuple `items` become
 * `prefixItems`, `dependencies` become `dependentRequired`/`dependentSchemas`, the root's `$id` and
 * `$schema` go (its `#` references now point into the served document), and local `$ref`s are
 * rebased onto `location`.
 */
function embedded(schema: JsonSchema, location: string): JsonSchema {
  const { $id: _id, $schema: _schema, ...rest } = schema;
  return converted(rest, location) as JsonSchema;
}

function converted(schema: Schema, location: string): Schema {
  const out = mapSubschemas(schema, (subschema) => converted(subschema, location));
  if (!isObject(out)) return out;
  if (typeof out.$ref === 'string' && out.$ref.startsWith('#')) {
    out.$ref = `${location}${out.$ref.slice(1)}`;
  }
  if (Array.isArray(out.items)) {
    const { items, additionalItems, ...others } = out;
    return {
      ...others,
      prefixItems: items,
      ...(additionalItems === undefined ? {} : { items: additionalItems }),
    };
  }
  if (isObject(out.dependencies)) {
    const { dependencies, ...others } = out;
    const entries = Object.entries(dependencies);
    const lists = entries.filter(([, value]) => Array.isArray(value));
    const schemas = entries.filter(([, value]) => !Array.isArray(value));
    return {
      ...others,
      ...(lists.length > 0 ? { dependentRequired: Object.fromEntries(lists) } : {}),
      ...(schemas.length > 0 ? { dependentSchemas: Object.fromEntries(schemas) } : {}),
    };
  }
  return out;
}
