/**
 * Execution recovery (docs/ARCHITECTURE.md#durability): an execution recorded by an API that died
 * before starting its Temporal run is started by the next recovery pass, and an execution whose
 * run was terminated outside Trellis is finished with a message saying so.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as workflowRepository from '#store/workflow-repository.js';
import { createLogger } from '#platform/logging.js';
import {
  recoverExecutions,
  type RecoveryDeps,
} from '#application/executions/recover-executions.js';
import { recordExecution } from '#application/executions/start-execution.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  addWorkflow,
  definition,
  delay,
  executionLogs,
  noop,
  start,
  tasksOf,
  untilStatuses,
} from '../support/engine-support.js';

let trellis: Trellis;
let deps: RecoveryDeps;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  deps = {
    db: trellis.db,
    client: trellis.temporal.client,
    config: trellis.config,
    logger: createLogger({ Level: 'silent' }),
  };
});
afterAll(async () => {
  await trellis?.stop();
});

/** Records an execution exactly as the API does, then stops: an API killed before the start. */
async function strandedExecution(workflowId: string): Promise<string> {
  const workflow = await workflowRepository.findById(trellis.db, workflowId);
  const execution = await recordExecution(
    { db: trellis.db, temporal: trellis.temporal, config: trellis.config },
    workflow!,
  );
  return execution.id;
}

async function temporalRunExists(executionId: string): Promise<boolean> {
  const row = await trellis.db
    .selectFrom('workflowExecution')
    .select('temporalWorkflowId')
    .where('id', '=', executionId)
    .executeTakeFirstOrThrow();
  try {
    await deps.client.workflow.getHandle(row.temporalWorkflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

describe('execution recovery', () => {
  it('starts the run of an execution recorded without one, once it passes the grace period', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([
        { name: 'One', type: noop },
        { name: 'Two', type: noop, dependencies: ['One'] },
      ]),
    );
    const executionId = await strandedExecution(workflowId);
    expect(await temporalRunExists(executionId)).toBe(false);

    // Too young: a live API may still be starting it. The pass says when it comes of age.
    const early = await recoverExecutions(deps, { graceMs: 60_000 });
    expect(early.started).not.toContain(executionId);
    expect(early.nextDueAt).not.toBeNull();
    expect(early.nextDueAt!.getTime()).toBeGreaterThan(Date.now() + 50_000);
    expect(await temporalRunExists(executionId)).toBe(false);

    const report = await recoverExecutions(deps, { graceMs: 0 });
    expect(report.started).toEqual([executionId]);
    expect(report.failed).toEqual([]);

    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 30_000,
    });
    expect(finished.status).toBe('Completed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect([tasks.One?.status, tasks.Two?.status]).toEqual(['Completed', 'Completed']);

    // Nothing left to repair: a second pass starts nothing and finishes nothing.
    const again = await recoverExecutions(deps, { graceMs: 0 });
    expect(again.started).toEqual([]);
    expect(again.finished).toEqual([]);
  }, 60_000);

  it('finishes an execution whose run was terminated from Temporal, its tasks Canceled', async () => {
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([
        { name: 'Wait', ...delay(120_000) },
        { name: 'After', type: noop, dependencies: ['Wait'] },
      ]),
    );
    await untilStatuses(trellis.admin, workflowId, executionId, { Wait: 'Running' });

    // A running run is left alone.
    const untouched = await recoverExecutions(deps, { graceMs: 0 });
    expect(untouched.started).toEqual([]);
    expect(untouched.finished).toEqual([]);

    const row = await trellis.db
      .selectFrom('workflowExecution')
      .select('temporalWorkflowId')
      .where('id', '=', executionId)
      .executeTakeFirstOrThrow();
    await deps.client.workflow.getHandle(row.temporalWorkflowId).terminate('operator test');

    const report = await recoverExecutions(deps, { graceMs: 0 });
    expect(report.finished).toEqual([executionId]);
    expect(report.started).toEqual([]);

    const execution = await trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
      params: { path: { workflowId, executionId } },
    });
    expect(execution.status).toBe('Canceled');
    expect(execution.executionEnd).not.toBeNull();
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    for (const task of [tasks.Wait!, tasks.After!]) {
      expect(task.status).toBe('Canceled');
      expect(task.message).toMatch(/terminated outside Trellis/);
      expect(task.endTime).not.toBeNull();
    }
    expect(await executionLogs(trellis.admin, workflowId, executionId)).toContain(
      'Canceled: the Temporal run was terminated outside Trellis (e.g. from the Temporal UI).',
    );

    // Recorded once: the next pass has nothing to do.
    const again = await recoverExecutions(deps, { graceMs: 0 });
    expect(again.finished).toEqual([]);
  }, 60_000);
});
