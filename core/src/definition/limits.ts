/**
 * The bounds of a workflow definition (`Definitions.*` in the configuration, README
 * "Configuration"). Checked at add, update and execution, before anything walks the definition
 * recursively, so that whatever is accepted also runs: the DAG walk, the expression resolver and
 * the database writes of a run never meet a definition larger or deeper than these.
 */
import type { ValidationProblem } from './validation/describe.js';
import { jsonLimitProblems } from './validation/json-limits.js';
import type { WorkflowDefinition } from './types.js';

/**
 * The bounds of a workflow definition, checked at add, update and execution (`Definitions.*` in the configuration).
 * They keep every definition the API accepts runnable: its JSON and its expressions nest no deeper
 * than the code walking them can go, and its size stays within what PostgreSQL and Temporal's
 * payloads take. `MaxDepth` has a ceiling for the same reason.
 */
export const definitionLimitDefaults = {
  /** UTF-8 bytes of the definition's JSON text. */
  MaxBytes: 1_048_576,
  /** Objects and arrays around any value, the definition itself counted; also expression nesting. */
  MaxDepth: 64,
  MaxTasks: 5_000,
  /** `dependencies` and `runOnFailureOf` entries of all tasks together. */
  MaxDependencies: 20_000,
  /** The workflow's and each task's name. */
  MaxNameLength: 200,
  /** Any other key or string, in UTF-16 code units. */
  MaxStringLength: 65_536,
  /** Subworkflows nested in a run: a run this many levels below its root starts no child. */
  MaxSubworkflowDepth: 10,
} as const;

/** Deepest nesting the code that walks definitions and bodies is known to handle. */
export const maxSupportedDepth = 1_000;

/** The bounds in force: the configuration's `Definitions` section. */
export type DefinitionLimits = { [Key in keyof typeof definitionLimitDefaults]: number };

/** The limits when the configuration sets none. */
export const defaultDefinitionLimits: DefinitionLimits = definitionLimitDefaults;

const setting = (key: keyof DefinitionLimits) => `Definitions.${key}`;

/** The definition text is too large to read (checked before it is parsed); null when it fits. */
export function textSizeProblem(text: string, limits: DefinitionLimits): string | null {
  // A UTF-16 code unit takes at most 3 UTF-8 bytes: most texts need no count.
  if (text.length * 3 <= limits.MaxBytes) return null;
  const bytes = new TextEncoder().encode(text).length;
  return bytes > limits.MaxBytes
    ? `is ${bytes} bytes long, over the limit of ${limits.MaxBytes} (${setting('MaxBytes')})`
    : null;
}

/**
 * Problems of a parsed definition's JSON, before its schema is checked: nesting deeper than
 * `MaxDepth`, keys and strings longer than `MaxStringLength` or holding characters PostgreSQL
 * cannot store. When there are any, nothing else should walk the value.
 */
export function valueProblems(value: unknown, limits: DefinitionLimits): ValidationProblem[] {
  return jsonLimitProblems(value, {
    maxDepth: limits.MaxDepth,
    depthSetting: setting('MaxDepth'),
    maxStringLength: limits.MaxStringLength,
    stringLengthSetting: setting('MaxStringLength'),
  });
}

/** Problems of a schema-valid definition's size: tasks, dependencies, name lengths. */
export function sizeProblems(
  definition: WorkflowDefinition,
  limits: DefinitionLimits,
): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const { tasks } = definition;
  if (tasks.length > limits.MaxTasks) {
    problems.push({
      path: ['tasks'],
      problem: `has ${tasks.length} tasks, over the limit of ${limits.MaxTasks} (${setting('MaxTasks')})`,
    });
  }
  const dependencies = tasks.reduce(
    (sum, task) => sum + (task.dependencies?.length ?? 0) + (task.runOnFailureOf?.length ?? 0),
    0,
  );
  if (dependencies > limits.MaxDependencies) {
    problems.push({
      path: ['tasks'],
      problem: `have ${dependencies} dependencies and runOnFailureOf entries in all, over the limit of ${limits.MaxDependencies} (${setting('MaxDependencies')})`,
    });
  }
  const nameProblem = (name: string) =>
    `is ${name.length} characters long, over the limit of ${limits.MaxNameLength} (${setting('MaxNameLength')})`;
  if (definition.name.length > limits.MaxNameLength) {
    problems.push({ path: ['name'], problem: nameProblem(definition.name) });
  }
  tasks.forEach((task, index) => {
    if (task.name.length > limits.MaxNameLength) {
      problems.push({ path: ['tasks', index, 'name'], problem: nameProblem(task.name) });
    }
  });
  return problems;
}
