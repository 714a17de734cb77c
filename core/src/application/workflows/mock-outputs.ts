/**
 * Whether mocked task outputs (a dry run's `mocks`, a test case's) fit what their tasks' plugins
 * declare they return.
 */
import type { InstalledPlugin } from '#store/plugin-repository.js';
import type { TaskType, WorkflowDefinition } from '#definition/types.js';
import { pluginSchemaValidator } from '#definition/validation/ajv.js';
import { validationErrorProblems } from '#definition/validation/describe.js';
import type { Problem } from '#definition/validation/problem.js';

/** The plugin a task runs, as the worker finds it (`installedLookups(...).taskPlugin`). */
export type TaskPluginLookup = (type: TaskType) => Promise<InstalledPlugin | undefined>;

/**
 * One problem per place where a mock does not fit its task's plugin's output schema, told at
 * `place(taskName)` and below. Mocks of names that are no plugin task are the caller's to refuse.
 */
export async function mockOutputProblems(
  definition: WorkflowDefinition,
  mocks: Record<string, unknown>,
  place: (taskName: string) => string,
  taskPlugin: TaskPluginLookup,
): Promise<Problem[]> {
  const tasks = new Map(definition.tasks.map((task) => [task.name, task]));
  const problems: Problem[] = [];
  for (const [name, output] of Object.entries(mocks)) {
    const type = tasks.get(name)?.type;
    if (type === undefined) continue;
    const plugin = await taskPlugin(type);
    const schema = plugin?.outputSchema;
    if (schema === undefined || Object.keys(schema).length === 0) continue;
    const validate = pluginSchemaValidator(schema, { verbose: true });
    // The validator fills in defaults; the mock is kept as given.
    if (validate(structuredClone(output))) continue;
    problems.push(
      ...validationErrorProblems(validate.errors, {
        place: (path) => [place(name), ...path.map(String)].join('.'),
        wording: 'people',
      }).map((problem) => ({
        ...problem,
        message: `${problem.message} (the output schema of ${plugin!.type})`,
      })),
    );
  }
  return problems;
}
