import type { Kysely } from 'kysely';
import {
  allowsPlugin,
  notAllowedMessage,
  pluginAllowanceOf,
} from '#application/workflows/allowed-plugins.js';
import * as configurationRepository from '#store/configuration-repository.js';
import type { Database } from '#store/tables.js';
import type { TaskDefinition, TaskType } from '#definition/types.js';
import type { PluginRunner, PluginRunRequest } from '#plugin-host/runner.js';

export type TaskPlugin = Pick<PluginRunRequest, 'type' | 'version' | 'specifications'>;

/**
 * The plugin a task's `type` names: inline, or through a configuration of the execution's
 * project. A configuration that does not exist there (another project's is not looked at) is an
 * error retrying cannot fix (`nonRetryable`).
 */
export async function taskPlugin(
  db: Kysely<Database>,
  projectId: string,
  type: TaskType,
): Promise<TaskPlugin> {
  if (typeof type !== 'string') {
    return {
      type: type.plugin,
      ...(type.version !== undefined ? { version: type.version } : {}),
      specifications: type.specifications ?? {},
    };
  }
  const configuration = await configurationRepository.findByName(db, projectId, type);
  if (!configuration) {
    throw Object.assign(new Error(`Plugin configuration '${type}' does not exist.`), {
      nonRetryable: true,
    });
  }
  // Secret settings stay encrypted here; the runner decrypts them right before the run.
  return {
    type: configuration.type,
    version: configuration.version,
    specifications: configuration.specifications,
  };
}

/**
 * Refuses (`nonRetryable`) a task whose plugin its project does not allow: a run started before
 * the project was restricted, or of a configuration whose plugin the restriction leaves out.
 */
export async function assertPluginAllowed(
  db: Kysely<Database>,
  projectId: string,
  taskName: string,
  pluginType: string,
): Promise<void> {
  const allowance = await pluginAllowanceOf(db, projectId);
  if (allowsPlugin(allowance, pluginType)) return;
  const message = notAllowedMessage(allowance, taskName, pluginType);
  throw Object.assign(new Error(`${message[0]!.toUpperCase()}${message.slice(1)}.`), {
    nonRetryable: true,
  });
}

/**
 * The names of the tasks whose plugin is installed and says it is quick: their attempts run as
 * local activities. Each distinct task `type` is looked up once.
 */
export async function quickTasks(
  db: Kysely<Database>,
  runner: PluginRunner,
  projectId: string,
  tasks: readonly TaskDefinition[],
): Promise<Set<string>> {
  const byType = new Map<string, Promise<boolean>>();
  const quick = await Promise.all(
    tasks.map(({ type }) => {
      if (type === undefined) return Promise.resolve(false); // a subworkflow runs no plugin
      const key = JSON.stringify(typeof type === 'string' ? type : [type.plugin, type.version]);
      let answer = byType.get(key);
      if (!answer) {
        answer = isQuick(db, runner, projectId, type);
        byType.set(key, answer);
      }
      return answer;
    }),
  );
  return new Set(tasks.filter((_, index) => quick[index]).map((task) => task.name));
}

// In doubt a task is not quick: a missing configuration or plugin, or a package that does not
// load, is then reported by the task's first attempt, in the task's own log, as before.
async function isQuick(
  db: Kysely<Database>,
  runner: PluginRunner,
  projectId: string,
  type: TaskType,
) {
  try {
    const plugin = await taskPlugin(db, projectId, type);
    return (await runner.installedManifest(plugin.type, plugin.version))?.quick === true;
  } catch {
    return false;
  }
}
