import { Context } from '@temporalio/activity';
import type { TrellisConfig } from '#platform/config/types.js';
import * as projectRepository from '#store/project-repository.js';
import type { ActivityDeps } from './deps.js';

/**
 * The project a run's children belong to (their parent's), as the workflow starts them: its name
 * for their details, and whether they carry it as `TrellisProject` (the namespace has it).
 * Decided here, in an activity's result, so that a replay decides the same.
 */
export interface ChildProject {
  name: string;
  attribute: boolean;
}

/** The `project` of an activity's result that starts children; absent for a project gone. */
export async function childProject(
  deps: Pick<ActivityDeps, 'db' | 'projectAttribute'>,
  projectId: string,
): Promise<{ project?: ChildProject }> {
  const name = await projectRepository.nameOf(deps.db, projectId);
  return name === undefined ? {} : { project: { name, attribute: deps.projectAttribute === true } };
}

/**
 * The namespace of the run this activity works for, as an execution row keeps it (null:
 * `Temporal.Namespace`): a schedule's runs and a run's children live where Temporal started them.
 */
export function runNamespace(config: Pick<TrellisConfig, 'Temporal'>): string | null {
  const namespace = Context.current().info.workflowNamespace;
  return namespace === undefined || namespace === config.Temporal.Namespace ? null : namespace;
}
