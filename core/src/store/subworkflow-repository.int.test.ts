import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedTestDatabase } from '../../../test/support/database.js';
import type { TrellisDatabase } from './database.js';
import * as executionRepository from './execution-repository.js';
import * as subworkflowRepository from './subworkflow-repository.js';
import * as taskExecutionRepository from './task-execution-repository.js';
import * as workflowRepository from './workflow-repository.js';

let database: TrellisDatabase;

beforeAll(async () => {
  database = await openMigratedTestDatabase();
});
afterAll(() => database?.close());

/** A stored workflow and a Running execution of it (a child of `parent` when given). */
async function runOf(name: string, parent?: { executionId: string; taskName: string }) {
  const { db } = database;
  const workflow = await workflowRepository.insert(db, {
    name,
    definition: JSON.stringify({ name, tasks: [{ name: 'T', type: 'x' }] }),
  });
  const parentTaskId = parent
    ? (await taskExecutionRepository.taskIds(db, parent.executionId)).get(parent.taskName)
    : undefined;
  const { execution } = await executionRepository.createExecutionWithTasks(db, {
    workflowId: workflow.id,
    workflowName: name,
    definition: workflow.definition,
    taskNames: ['T'],
    temporalWorkflowId: `test-${name}`,
    status: 'Running',
    executionStart: new Date(Date.now() - 60_000),
    ...(parent && parentTaskId
      ? {
          parent: { executionId: parent.executionId, taskExecutionId: parentTaskId, taskName: 'T' },
        }
      : {}),
  });
  return execution;
}

describe('subworkflowRepository', () => {
  it('walks the chain of parents, links a task to its child, and keeps children from recovery while their parent runs', async () => {
    const { db } = database;
    const root = await runOf('Root');
    const middle = await runOf('Middle', { executionId: root.id, taskName: 'T' });
    const leaf = await runOf('Leaf', { executionId: middle.id, taskName: 'T' });

    expect(await subworkflowRepository.chainOf(db, leaf.id, 10)).toEqual([
      { executionId: root.id, workflowName: 'Root' },
      { executionId: middle.id, workflowName: 'Middle' },
      { executionId: leaf.id, workflowName: 'Leaf' },
    ]);
    // The nearest ones when the chain is longer than asked for.
    expect(
      (await subworkflowRepository.chainOf(db, leaf.id, 2)).map((l) => l.workflowName),
    ).toEqual(['Middle', 'Leaf']);
    const rootTask = (await taskExecutionRepository.taskIds(db, root.id)).get('T')!;
    expect(await subworkflowRepository.latestChildOf(db, rootTask)).toEqual({
      id: middle.id,
      workflowId: middle.workflowId,
    });
    expect(await subworkflowRepository.workflowIdOf(db, root.id)).toBe(root.workflowId);

    const unprepared = async () =>
      (await executionRepository.listActiveExecutions(db, { prepared: false, limit: 100 })).map(
        (execution) => execution.id,
      );
    expect(await unprepared()).toEqual([root.id]);
    await executionRepository.markExecutionFinished(db, root.id, {
      status: 'Failed',
      message: 'gone',
      at: new Date(),
    });
    // Its parent ended without starting it: the child is recovery's again.
    expect(await unprepared()).toEqual([middle.id]);
  });
});
