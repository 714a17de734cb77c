import type { Kysely } from 'kysely';
import type { TrellisConfig } from '#platform/config/types.js';
import type { TemporalClient } from '#platform/temporal/connection.js';
import * as executionRepository from '#store/execution-repository.js';
import type { Database, WorkflowRow } from '#store/tables.js';
import * as triggerRepository from '#store/trigger-repository.js';
import * as workflowRepository from '#store/workflow-repository.js';
import { Conflict } from '#definition/errors.js';
import { deleteTriggerSchedule, projectClient } from '../triggers/schedules.js';

/** 409 while the workflow has executions in progress: deleting it would pull runs from under them. */
export async function assertNoActiveExecutions(
  db: Kysely<Database>,
  workflow: Pick<WorkflowRow, 'id' | 'name'>,
): Promise<void> {
  if (await executionRepository.hasActiveExecutions(db, workflow.id)) {
    throw new Conflict(
      `Workflow "${workflow.name}" has executions in progress; cancel them or wait until they finish.`,
    );
  }
}

/**
 * Deletes a workflow of `project` with its revisions and triggers, and drops its triggers'
 * schedules from Temporal; in the caller's transaction `trx`, so that an unavailable Temporal
 * (503) leaves the rows as they were. False when the workflow is gone already.
 */
export async function removeWorkflow(
  trx: Kysely<Database>,
  temporal: TemporalClient,
  config: TrellisConfig,
  project: string,
  workflowId: string,
): Promise<boolean> {
  const triggers = await triggerRepository.listByWorkflow(trx, workflowId);
  if (!(await workflowRepository.remove(trx, workflowId))) return false;
  for (const trigger of triggers.filter((t) => t.type === 'TimeBased')) {
    await deleteTriggerSchedule(projectClient(temporal, config, project), trigger.id);
  }
  return true;
}
