import type { Kysely } from 'kysely';
import * as configurationRepository from '#store/configuration-repository.js';
import * as pluginRepository from '#store/plugin-repository.js';
import type { InstalledPlugin } from '#store/plugin-repository.js';
import type { Database } from '#store/tables.js';
import type { DefinitionLimits } from '#definition/limits.js';
import { checkTaskParameters } from '#definition/parameters.js';
import { limited, parseDefinition } from '#definition/parse.js';
import { checkReferences } from '#definition/references.js';
import type { TaskType, WorkflowDefinition } from '#definition/types.js';
import { Invalid } from '#definition/errors.js';
import { problemsWithin, type Problem } from '#definition/validation/problem.js';
import { formatPath } from '#definition/location.js';
import { allowsPlugin, notAllowedMessage, pluginAllowanceOf } from './allowed-plugins.js';
import { checkCalledWorkflows } from './called-workflows.js';
import { mockOutputProblems } from './mock-outputs.js';

/**
 * Where a check finds the installed plugins: the API process keeps a snapshot of them
 * (server/src/plugins/installed-plugins.ts); without one, each is a query.
 */
export interface PluginLookup {
  /** That version of a type (matched case-insensitively), or its latest installed version. */
  find(type: string, version?: string): Promise<InstalledPlugin | undefined>;
}

/**
 * Validates a definition's text as add and update both require: JSON, schema,
 * DAG checks within the configured `limits`, then that every plugin and configuration it names
 * exists, that each task's parameters fit its plugin's parameter schema, and that the project
 * allows each task's plugin (`plugin.not_allowed`). 400 with one message
 * per problem; nothing is stored when there is any. Plugins are looked up in `plugins` (the API
 * process's view of them) when given, else in the database. Each problem is told where the
 * definition is: by default in the request's `body.definition`.
 */
export async function validateWorkflowDefinition(
  db: Kysely<Database>,
  /**
   * The project the definition is stored in: it may name only that project's configurations and
   * call only its workflows.
   */
  projectId: string,
  text: string,
  limits: DefinitionLimits,
  plugins?: PluginLookup,
  /** The stored workflow the definition is for (none on add): its calls may not cycle back. */
  self?: { id: string },
  told: (problems: Problem[]) => Problem[] = (problems) =>
    problemsWithin('body.definition', problems),
  /** The lookups to check with, when the caller asks them more afterwards (`quickTaskNames`). */
  installed: InstalledLookups = installedLookups(db, projectId, plugins),
): Promise<WorkflowDefinition> {
  const parsed = parseDefinition(text, limits);
  if (!parsed.ok) throw new Invalid(told(parsed.problems));
  const problems = [
    ...(await checkReferences(parsed.definition, {
      plugin: async (type, version) => (await installed.plugin(type, version)) !== undefined,
      configuration: async (name) => (await installed.configuration(name)) !== undefined,
      pluginTypes: async () => (await pluginRepository.list(db)).map((plugin) => plugin.type),
      configurationNames: async () =>
        (await configurationRepository.list(db, projectId)).items.map((row) => row.name),
    })),
    ...(await checkTaskParameters(
      parsed.definition,
      async (type) => (await installed.taskPlugin(type))?.parametersSchema,
    )),
    ...(await checkCalledWorkflows(db, projectId, parsed.definition, self, limits)),
    ...(await checkAllowedPlugins(db, projectId, parsed.definition, installed)),
    ...(await testCaseMockProblems(parsed.definition, installed)),
  ];
  if (problems.length > 0) {
    throw new Invalid(told(limited(problems)));
  }
  return parsed.definition;
}

/** One problem per place where a test case's mock does not fit its task's plugin's output schema. */
async function testCaseMockProblems(
  definition: WorkflowDefinition,
  installed: ReturnType<typeof installedLookups>,
): Promise<Problem[]> {
  const cases = definition.tests ?? [];
  const problems = await Promise.all(
    cases.map((testCase, index) =>
      mockOutputProblems(
        definition,
        testCase.mocks ?? {},
        (name) => formatPath(['tests', index, 'mocks', name]),
        installed.taskPlugin,
      ),
    ),
  );
  return problems.flat();
}

/** One problem per task whose plugin (inline, or its configuration's) the project does not allow. */
async function checkAllowedPlugins(
  db: Kysely<Database>,
  projectId: string,
  definition: WorkflowDefinition,
  installed: ReturnType<typeof installedLookups>,
): Promise<Problem[]> {
  const allowance = await pluginAllowanceOf(db, projectId);
  if (allowance.allowed === null) return [];
  const problems = await Promise.all(
    definition.tasks.map(async ({ name, type }, index): Promise<Problem | null> => {
      if (type === undefined) return null; // a subworkflow runs no plugin
      const plugin =
        typeof type === 'string' ? (await installed.configuration(type))?.type : type.plugin;
      if (plugin === undefined || allowsPlugin(allowance, plugin)) return null;
      return {
        code: 'plugin.not_allowed',
        path: formatPath(['tasks', index, 'type']),
        message: notAllowedMessage(allowance, name, plugin),
      };
    }),
  );
  return problems.filter((problem) => problem !== null);
}

/**
 * The installed plugins and the project's configurations one definition names, each looked up
 * once.
 */
export function installedLookups(
  db: Kysely<Database>,
  projectId: string,
  plugins: PluginLookup | undefined,
) {
  const answers = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, ask: () => Promise<T>): Promise<T> => {
    if (!answers.has(key)) answers.set(key, ask());
    return answers.get(key) as Promise<T>;
  };
  const plugin = (type: string, version?: string) =>
    once(`plugin\u0000${type.toLowerCase()}\u0000${version ?? ''}`, () =>
      plugins
        ? plugins.find(type, version)
        : version === undefined
          ? pluginRepository.latestByType(db, type)
          : pluginRepository.findByTypeVersion(db, type, version),
    );
  const configuration = (name: string) =>
    once(`configuration\u0000${name}`, () =>
      configurationRepository.findByName(db, projectId, name),
    );
  /** The plugin a task runs, as the worker finds it: inline, or the configuration's. */
  const taskPlugin = async (type: TaskType) => {
    if (typeof type !== 'string') return plugin(type.plugin, type.version);
    const named = await configuration(type);
    return named === undefined ? undefined : plugin(named.type, named.version);
  };
  return { plugin, configuration, taskPlugin };
}

export type InstalledLookups = ReturnType<typeof installedLookups>;

/**
 * The names of a checked definition's tasks whose plugin is quick (their attempts run as local
 * activities), as the installed plugins' rows say; undefined when a row does not say (a plugin
 * installed before rows kept it), so that the run's worker decides from the package instead.
 */
export async function quickTaskNames(
  definition: WorkflowDefinition,
  installed: InstalledLookups,
): Promise<Set<string> | undefined> {
  const quick = new Set<string>();
  for (const task of definition.tasks) {
    if (task.type === undefined) continue; // a subworkflow runs no plugin
    const plugin = await installed.taskPlugin(task.type);
    if (plugin === undefined || plugin.quick === null) return undefined;
    if (plugin.quick) quick.add(task.name);
  }
  return quick;
}
