/**
 * The Running mark of a plugin's attempt finds an earlier run of the same attempt cut short (the
 * row Running in that attempt since an earlier start), in the write it makes anyway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedTestDatabase } from '../../../test/support/database.js';
import type { TrellisDatabase } from './database.js';
import * as executionRepository from './execution-repository.js';
import { readEvents } from './execution-event-repository.js';
import * as taskExecutionRepository from './task-execution-repository.js';
import * as workflowRepository from './workflow-repository.js';

let database: TrellisDatabase & { url: string };

beforeAll(async () => {
  database = await openMigratedTestDatabase();
});
afterAll(() => database?.close());

let runs = 0;

async function newTask() {
  const { db } = database;
  const name = `interrupted-${++runs}`;
  const workflow = await workflowRepository.insert(db, {
    name,
    definition: JSON.stringify({ name, tasks: [] }),
  });
  const { execution } = await executionRepository.createExecutionWithTasks(db, {
    workflowId: workflow.id,
    workflowName: name,
    definition: workflow.definition,
    taskNames: ['Long'],
    temporalWorkflowId: `interrupted-test-${workflow.id}`,
    status: 'Pending',
  });
  const id = (await taskExecutionRepository.taskIds(db, execution.id)).get('Long')!;
  return { executionId: execution.id, id };
}

const second = (n: number) => new Date(Date.UTC(2026, 10, 29, 12, 0, n));

describe('markTaskRunning', () => {
  it('finds and counts an earlier run of the same attempt that never ended', async () => {
    const { db } = database;
    const { executionId, id } = await newTask();
    const mark = (attempt: number, at: Date) =>
      taskExecutionRepository.markTaskRunning(db, { id, attempt, at, findInterrupted: true });

    expect(await mark(1, second(1))).toEqual({ interruptedAttempts: 0 });
    // The re-run after the worker died: the row still says Running, since second 1.
    expect(await mark(1, second(9))).toEqual({
      interruptedAttempts: 1,
      interrupted: { startedAt: second(1), before: 0 },
    });
    // The same run's write again finds nothing new.
    expect(await mark(1, second(9))).toEqual({ interruptedAttempts: 1 });
    await taskExecutionRepository.recordAttempt(
      db,
      {
        id,
        attempt: 1,
        status: 'Retrying',
        message: 'again',
        at: second(10),
        startedAt: second(9),
      },
      [],
    );
    // The next attempt the workflow gives is not an interruption; the count stays.
    expect(await mark(2, second(11))).toEqual({ interruptedAttempts: 1 });

    const row = await db
      .selectFrom('taskExecution')
      .select(['attempts', 'interruptedAttempts', 'startTime'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ attempts: 2, interruptedAttempts: 1, startTime: second(1) });
    // The task's events carry the counts: the re-run's Running (no status change) is one.
    const events = (await readEvents(db, executionId, 0, 100)).filter(
      (event) => event.type === 'task',
    );
    expect(
      events.map((event) => [
        event.data.status,
        'attempts' in event.data ? event.data.attempts : undefined,
        'interruptedAttempts' in event.data ? event.data.interruptedAttempts : undefined,
      ]),
    ).toEqual([
      ['Pending', 0, 0],
      ['Running', 1, 0],
      ['Running', 2, 1],
      ['Retrying', 2, 1],
      ['Running', 3, 1],
    ]);
  });

  it('counts nothing for a forEach’s or subworkflow’s start (not looking)', async () => {
    const { db } = database;
    const { id } = await newTask();
    await taskExecutionRepository.markTaskRunning(db, { id, attempt: 1, at: second(1) });
    expect(
      await taskExecutionRepository.markTaskRunning(db, { id, attempt: 1, at: second(9) }),
    ).toEqual({ interruptedAttempts: 0 });
  });
});
