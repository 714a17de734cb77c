import type { Kysely } from 'kysely';
import * as configurationRepository from '#store/configuration-repository.js';
import type { Database, PluginConfigurationRow } from '#store/tables.js';
import * as workflowRepository from '#store/workflow-repository.js';
import { parseDefinition } from '#definition/parse.js';

/**
 * What still uses a plugin, in every project (plugins are instance-wide): stored workflows (a
 * task's `type: {plugin, version?}`, or the name of a configuration of the workflow's project)
 * and plugin configurations. Uninstall and update refuse to break them.
 */

export interface PluginUsages {
  /** Names of stored workflows. */
  workflows: string[];
  /** Names of plugin configurations. */
  configurations: string[];
}

export interface UsageQuery {
  type: string;
  /** The versions about to disappear. */
  removedVersions: string[];
  /** The versions still installed afterwards (an unpinned task uses the latest of them). */
  remainingVersions: string[];
  /** Whether configurations on removed versions count (update moves them instead). */
  includeConfigurations?: boolean;
}

/** The workflows and configurations that would break if `removedVersions` went away. */
export async function findPluginUsages(
  db: Kysely<Database>,
  query: UsageQuery,
): Promise<PluginUsages> {
  const removed = new Set(query.removedVersions);
  const sameType = (type: string) => type.toLowerCase() === query.type.toLowerCase();
  const configurations =
    query.includeConfigurations === false
      ? []
      : await configurationsOnVersions(db, query.type, query.removedVersions);
  // A task names a configuration of its workflow's project.
  const named = (projectId: string, name: string) => `${projectId}\u0000${name}`;
  const configurationKeys = new Set(configurations.map((c) => named(c.projectId, c.name)));

  const workflows = await workflowRepository.listAll(db);
  const using = workflows.filter((workflow) =>
    taskTypes(workflow.definition).some((taskType) =>
      typeof taskType === 'string'
        ? configurationKeys.has(named(workflow.projectId, taskType))
        : sameType(taskType.plugin) &&
          (taskType.version === undefined
            ? query.remainingVersions.length === 0
            : removed.has(taskType.version)),
    ),
  );
  return {
    workflows: using.map((workflow) => workflow.name).sort(),
    configurations: [...new Set(configurations.map((c) => c.name))].sort(),
  };
}

/** Configurations of a plugin type on any of `versions`, by name. */
export async function configurationsOnVersions(
  db: Kysely<Database>,
  type: string,
  versions: string[],
): Promise<PluginConfigurationRow[]> {
  const wanted = new Set(versions);
  return (await configurationRepository.listByPlugin(db, type)).filter((c) =>
    wanted.has(c.version),
  );
}

type TaskTypeReference = string | { plugin: string; version?: string };

/**
 * The task types of a stored definition. One that no longer validates (it passed when it was
 * stored) is still read leniently (keys case-insensitive, malformed parts ignored), so a
 * reference check never misses a use.
 */
export function taskTypes(definitionText: string): TaskTypeReference[] {
  const parsed = parseDefinition(definitionText);
  if (parsed.ok) {
    return parsed.definition.tasks.flatMap(({ type }) =>
      type === undefined
        ? [] // a subworkflow uses no plugin itself
        : typeof type === 'string'
          ? [type]
          : [pinnedReference(type.plugin, type.version)],
    );
  }
  let definition: unknown;
  try {
    definition = JSON.parse(definitionText);
  } catch {
    return [];
  }
  const tasks = field(definition, 'tasks');
  if (!Array.isArray(tasks)) return [];
  return tasks.flatMap((task): TaskTypeReference[] => {
    const type = field(task, 'type');
    if (typeof type === 'string') return [type];
    const plugin = field(type, 'plugin');
    if (typeof plugin !== 'string') return [];
    const version = field(type, 'version');
    return [pinnedReference(plugin, typeof version === 'string' ? version : undefined)];
  });
}

/** `latest` or an empty version means "the latest installed": not pinned. */
function pinnedReference(plugin: string, version: string | undefined): TaskTypeReference {
  const pinned = version !== undefined && version !== '' && version.toLowerCase() !== 'latest';
  return { plugin, version: pinned ? version : undefined };
}

function field(value: unknown, name: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const key = Object.keys(value).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : (value as Record<string, unknown>)[key];
}
