import type { Kysely } from 'kysely';
import * as projectRepository from '#store/project-repository.js';
import type { Database } from '#store/tables.js';

/**
 * Which installed plugins a project's workflows may use. Checked where a definition is saved or
 * started (validate-definition.ts) and where a task runs (the worker), so that a restriction set
 * after a workflow was saved holds for its runs too.
 */
export interface PluginAllowance {
  projectName: string;
  /** The plugin types allowed; null: every installed plugin. */
  allowed: readonly string[] | null;
}

/** The project's allowance (every plugin for a project that no longer exists: nothing runs there). */
export async function pluginAllowanceOf(
  db: Kysely<Database>,
  projectId: string,
): Promise<PluginAllowance> {
  const project = await projectRepository.projectById(db, projectId);
  return { projectName: project?.name ?? projectId, allowed: project?.allowedPlugins ?? null };
}

/** Whether the project allows plugin `type` (types match case-insensitively, as they are found). */
export function allowsPlugin({ allowed }: PluginAllowance, type: string): boolean {
  if (allowed === null) return true;
  const wanted = type.toLowerCase();
  return allowed.some((name) => name.toLowerCase() === wanted);
}

/** Why task `taskName` may not run plugin `type`. */
export function notAllowedMessage(
  { projectName, allowed }: PluginAllowance,
  taskName: string,
  type: string,
): string {
  const names = allowed && allowed.length > 0 ? allowed.join(', ') : 'none';
  return `task '${taskName}' uses plugin '${type}', which project "${projectName}" does not allow (allowed: ${names})`;
}
