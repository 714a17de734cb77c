import type { BuiltInPluginParameters } from './generated/plugin-types.js';
import type {
  PluginReference,
  TaskDefinition as ContractTask,
  WorkflowDefinition as ContractDefinition,
} from './generated/workflow-definition.js';

/**
 * Workflow definitions as objects: the definition format generated from the contract
 * (spec/definition/), with each task's `parameters` typed by its plugin. A request may send the
 * object itself or its JSON text; reads return the text.
 *
 * A `WorkflowDefinition` literal gets missing and mistyped parameters and unknown plugin types
 * flagged, but TypeScript checks the parameter names of a union of tasks against every plugin at
 * once, so a name some other plugin takes passes. `defineWorkflow` checks each task against its
 * own plugin, names included.
 */

/** A string holding a `$[...]` expression, e.g. `$[Outputs('Fetch').body]`, resolved when the task runs. */
export type Expression = `${string}$[${string}`;

/**
 * A parameter value as a definition may write it: the value, or an expression in its place, at
 * any depth (the server checks it once resolved).
 */
export type WithExpressions<T> = T extends string
  ? T | Expression
  : T extends readonly (infer Item)[]
    ? WithExpressions<Item>[] | Expression
    : T extends object
      ? { [K in keyof T]: WithExpressions<T[K]> } | Expression
      : T | Expression;

/**
 * The parameters of each plugin a definition may name, by plugin type: the built-ins'. Add your
 * own plugins' by augmenting it:
 *
 * ```ts
 * declare module '@trellis/sdk' {
 *   interface PluginParameters {
 *     'Acme/Greeter': { name: string };
 *   }
 * }
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- augmented by users
export interface PluginParameters extends BuiltInPluginParameters {}

/** A plugin type a definition may name (`PluginParameters`' keys). */
export type PluginType = Extract<keyof PluginParameters, string>;

/** A task on a plugin named inline: its `parameters` typed by that plugin. */
export type PluginTask<P extends PluginType = PluginType> = P extends PluginType
  ? Omit<ContractTask, 'type' | 'parameters'> & {
      /** The plugin, by type and version (the latest installed when absent). */
      type: Omit<PluginReference, 'plugin'> & { plugin: P };
      /** The plugin's parameters; strings may hold `$[ ... ]` expressions. */
      parameters?: WithExpressions<PluginParameters[P]>;
    }
  : never;

/** A task named by a plugin configuration (`/config`): its parameters are the configuration plugin's. */
export type ConfiguredTask = Omit<ContractTask, 'type'> & {
  /** The name of a plugin configuration. */
  type: string;
};

/** One task of a definition. */
export type WorkflowTask = PluginTask | ConfiguredTask;

/** A workflow definition: what `POST /workflows/Add` and `PUT /workflows/{id}` take as `definition`. */
export type WorkflowDefinition = Omit<ContractDefinition, 'tasks'> & {
  /** The tasks of the DAG; edges come from each task's `dependencies` and `runOnFailureOf`. */
  tasks: WorkflowTask[];
};

/**
 * Each task's parameter names against its own plugin's: an unknown name must have the type of a
 * message saying so (no value has it). Plugins whose parameters are free-form take any name.
 */
type KnownNames<Given, Expected, P extends string> = string extends keyof Expected
  ? unknown
  : {
      [K in keyof Given]: K extends keyof Expected
        ? unknown
        : `"${K & string}" is not a parameter of ${P}`;
    };

type CheckedTask<T> = T extends {
  type: { plugin: infer P extends PluginType };
  parameters: infer Given;
}
  ? { parameters: KnownNames<Given, PluginParameters[P], P> }
  : unknown;

/** The checks `defineWorkflow` adds to `WorkflowDefinition`: each task's names, by its plugin. */
export type CheckedDefinition<D> = D extends { tasks: infer Tasks extends readonly unknown[] }
  ? { tasks: { [I in keyof Tasks]: CheckedTask<Tasks[I]> } }
  : unknown;

/**
 * Returns the definition as given, type-checking each task's `parameters` against its own
 * plugin's, names included:
 *
 * ```ts
 * const definition = defineWorkflow({
 *   name: 'Sum',
 *   tasks: [{ name: 'Sum', type: { plugin: 'Data/Json' }, parameters: { input: [1, 2], expression: '$sum($)' } }],
 * });
 * await trellis.POST('/workflows/Add', { body: { definition } });
 * ```
 */
export function defineWorkflow<const D extends WorkflowDefinition>(
  definition: D & CheckedDefinition<D>,
): D {
  return definition;
}
