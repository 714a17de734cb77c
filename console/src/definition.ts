/**
 * A workflow definition as the console draws it: its tasks with what carries each out and the
 * edges between them. Read leniently (keys in any case, as the server reads them; missing or
 * mistyped parts left empty), so that a definition being edited still draws as far as it goes.
 */
import type { components } from '@trellis/sdk';

export type InputType = components['schemas']['Definition.InputType'];

/** One input a run takes (`inputs` of the definition). */
export interface InputDeclaration {
  type: InputType;
  required: boolean;
  /** Absent when the declaration has none. */
  default?: unknown;
  description: string;
}

/** A task as the graph draws it. */
export interface GraphTask {
  name: string;
  /** `plugin`: `type` names a plugin; `configuration`: a plugin configuration by name. */
  kind: 'plugin' | 'configuration';
  /** The plugin type (with its version when pinned), or the configuration's name. */
  typeLabel: string;
  dependencies: string[];
  /** Tasks whose failure makes this one ready. */
  runOnFailureOf: string[];
  /** The task `errorHandling: { strategy: TriggerTask }` runs when this one fails. */
  triggers: string | null;
  /** `executionCondition.expression`, when the task has one. */
  condition: string | null;
  /** The approval a person gives before the task runs, when `manualApproval.enabled`. */
  approval: { comment: string } | null;
}

export interface GraphDefinition {
  name: string;
  description: string;
  tasks: GraphTask[];
  inputs: Record<string, InputDeclaration>;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value of `key` in `object`, the key matched case-insensitively. */
export function field(object: unknown, key: string): unknown {
  if (!isObject(object)) return undefined;
  if (Object.hasOwn(object, key)) return object[key];
  const lower = key.toLowerCase();
  const found = Object.keys(object).find((candidate) => candidate.toLowerCase() === lower);
  return found === undefined ? undefined : object[found];
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const names = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

const inputTypes: readonly InputType[] = [
  'string',
  'number',
  'integer',
  'boolean',
  'object',
  'array',
];

/** Reads a parsed definition for drawing; whatever is missing or mistyped is left empty. */
export function readDefinition(value: unknown): GraphDefinition {
  const tasks = field(value, 'tasks');
  return {
    name: text(field(value, 'name')),
    description: text(field(value, 'description')),
    tasks: Array.isArray(tasks) ? tasks.filter(isObject).map(readTask) : [],
    inputs: readInputs(field(value, 'inputs')),
  };
}

function readTask(task: Json): GraphTask {
  const type = field(task, 'type');
  const plugin = text(field(type, 'plugin'));
  const version = text(field(type, 'version'));
  const errorHandling = field(task, 'errorHandling');
  const strategy = text(field(errorHandling, 'strategy'));
  const approval = field(task, 'manualApproval');
  const condition = field(field(task, 'executionCondition'), 'expression');
  return {
    name: text(field(task, 'name')),
    kind: typeof type === 'string' ? 'configuration' : 'plugin',
    typeLabel: typeof type === 'string' ? type : version ? `${plugin} ${version}` : plugin,
    dependencies: names(field(task, 'dependencies')),
    runOnFailureOf: names(field(task, 'runOnFailureOf')),
    triggers:
      strategy.toLowerCase() === 'triggertask'
        ? text(field(errorHandling, 'triggerTask')) || null
        : null,
    condition: typeof condition === 'string' && condition !== '' ? condition : null,
    approval:
      field(approval, 'enabled') === true ? { comment: text(field(approval, 'comment')) } : null,
  };
}

/** Declared inputs (a definition's, an approval's form), read leniently like the rest. */
export function readInputs(value: unknown): Record<string, InputDeclaration> {
  const inputs: Record<string, InputDeclaration> = {};
  if (!isObject(value)) return inputs;
  for (const [name, declaration] of Object.entries(value)) {
    const type = field(declaration, 'type');
    if (!inputTypes.includes(type as InputType)) continue;
    const hasDefault =
      isObject(declaration) &&
      Object.keys(declaration).some((key) => key.toLowerCase() === 'default');
    inputs[name] = {
      type: type as InputType,
      required: field(declaration, 'required') === true,
      ...(hasDefault ? { default: field(declaration, 'default') } : {}),
      description: text(field(declaration, 'description')),
    };
  }
  return inputs;
}

/** Parses a definition's JSON text for drawing; null when it is not a JSON object. */
export function parseDefinitionText(source: string): GraphDefinition | null {
  try {
    const value: unknown = JSON.parse(source);
    return isObject(value) ? readDefinition(value) : null;
  } catch {
    return null;
  }
}
