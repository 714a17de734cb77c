/**
 * Checks each task's parameters against the parameter schema of the plugin that carries the task
 * out, when a workflow is added or updated, so that a missing, unknown or mistyped parameter is
 * refused then rather than failing the run. A value holding a `$[...]` expression is known only
 * when the task runs, so here it stands for any value; the runner checks it, resolved, against
 * the plugin's own schema before `execute`. The schema lookups come from the caller (the
 * repositories), so this module has no database code of its own.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { JsonSchema } from '@trellis/plugin-kit';
import { pluginMessageStyle } from './validation/plugin-wording.js';
import { pluginSchemaValidator } from './validation/ajv.js';
import { describeValidationErrors } from './validation/describe.js';
import { problemAt, type Problem } from './validation/problem.js';
import { mapSubschemas, type Schema, type SubschemaKeyword } from './validation/subschemas.js';
import { formatPath } from './location.js';
import type { TaskType, WorkflowDefinition } from './types.js';

/** Marks the schema that `acceptingExpressions` adds, so its errors can be told apart. */
const EXPRESSION_MARK = 'trellis:expression';

/** A string holding a `$[...]` expression (or several, or text around one). */
export function expressionSchema(): JsonSchema {
  return {
    $comment: EXPRESSION_MARK,
    type: 'string',
    pattern: '\\$\\[',
    description: 'A `$[...]` expression, resolved when the task runs.',
  };
}

/**
 * Keywords whose subschemas describe other values (a property, an item): those values may be
 * expressions. Keywords whose subschemas describe the same value (`allOf`, `then`,
 * `dependencies`...), which is already widened where it is named, or definitions, are only
 * widened inside. `not`, `if` and `propertyNames` are left alone: widening them would change
 * what the schema means, and property names are never expressions.
 */
const OTHER_VALUES = new Set<SubschemaKeyword>([
  'properties',
  'patternProperties',
  'additionalProperties',
  'items',
  'additionalItems',
  'contains',
]);
const LEFT_ALONE = new Set<SubschemaKeyword>(['not', 'if', 'propertyNames']);
const ANNOTATIONS = new Set(['description', 'title', 'default', 'examples', '$comment']);

/**
 * The schema, widened so that every value inside it (a property, an item, at any depth) may also
 * be an expression string; the value itself (the whole `parameters` object) may not. A literal
 * value is checked as before: unknown and missing properties, types, enums.
 */
export function acceptingExpressions(schema: JsonSchema): JsonSchema {
  return widenInside(schema) as JsonSchema;
}

function widenInside(schema: Schema): Schema {
  return mapSubschemas(schema, (subschema, keyword) => {
    if (LEFT_ALONE.has(keyword)) return subschema;
    return OTHER_VALUES.has(keyword) ? orExpression(subschema) : widenInside(subschema);
  });
}

/** A value that matches the schema, or an expression. */
function orExpression(schema: Schema): Schema {
  // Anything goes already (`true`, `{}`, or only annotations); nothing goes (`false`).
  if (typeof schema === 'boolean') return schema;
  if (Object.keys(schema).every((keyword) => ANNOTATIONS.has(keyword))) return schema;
  const { description, title } = schema;
  return {
    ...(description === undefined ? {} : { description }),
    ...(title === undefined ? {} : { title }),
    anyOf: [widenInside(schema), expressionSchema()],
  };
}

/** The parameters schema of the plugin a task's `type` names; undefined when it names none. */
export type ParameterSchemaLookup = (type: TaskType) => Promise<JsonSchema | undefined>;

/**
 * One problem each, naming the task and the parameter in words:
 * `tasks[0] "Sum": parameter "data" is not allowed`. Tasks whose plugin or configuration is
 * unknown are skipped (that is reported on its own).
 */
export async function checkTaskParameters(
  definition: WorkflowDefinition,
  parametersSchema: ParameterSchemaLookup,
): Promise<Problem[]> {
  const problems = await Promise.all(
    definition.tasks.map(async (task, index) => {
      if (task.type === undefined) return []; // a subworkflow: its inputs are checked on their own
      const schema = await parametersSchema(task.type);
      if (schema === undefined) return [];
      const at = `${formatPath(['tasks', index])} "${task.name}"`;
      return parameterProblems(schema, task.parameters ?? {}).map((problem) =>
        problemAt(undefined, `${at}: ${problem}`),
      );
    }),
  );
  return problems.flat();
}

/** What is wrong with literal parameters for a plugin's parameter schema (empty when nothing). */
export function parameterProblems(schema: JsonSchema, parameters: unknown): string[] {
  const validate = literalValidator(schema);
  // The validator fills in defaults; the definition is stored as written.
  if (validate(structuredClone(parameters))) return [];
  const errors = (validate.errors ?? []).filter((error) => !isExpressionBranch(error));
  return describeValidationErrors(errors, pluginMessageStyle('parameter'));
}

// Schemas come from installed plugins' rows; the same row object serves every task of a type.
const validators = new WeakMap<JsonSchema, ValidateFunction>();

function literalValidator(schema: JsonSchema): ValidateFunction {
  let validate = validators.get(schema);
  if (validate === undefined) {
    validate = pluginSchemaValidator(acceptingExpressions(schema), { verbose: true });
    validators.set(schema, validate);
  }
  return validate;
}

/** An error of the expression branch: only says the literal value is not an expression. */
function isExpressionBranch(error: ErrorObject): boolean {
  return error.parentSchema?.$comment === EXPRESSION_MARK;
}
