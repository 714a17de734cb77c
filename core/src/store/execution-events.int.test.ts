import { randomUUID } from 'node:crypto';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedTestDatabase } from '../../../test/support/database.js';
import { createTestDatabase } from '../../../test/support/services.js';
import { buildConfig } from '#platform/config/load.js';
import { createLogger } from '#platform/logging.js';
import { openDatabase, type TrellisDatabase } from './database.js';
import { migrations } from './migrate.js';
import * as executionRepository from './execution-repository.js';
import {
  executionEventsChannel,
  isTerminal,
  readEvents,
  type ExecutionEvent,
} from './execution-event-repository.js';
import * as logRepository from './log-repository.js';
import * as approvalRepository from './approval-repository.js';
import * as taskExecutionRepository from './task-execution-repository.js';
import * as workflowRepository from './workflow-repository.js';

let database: TrellisDatabase & { url: string };

beforeAll(async () => {
  database = await openMigratedTestDatabase();
});
afterAll(() => database?.close());

let runs = 0;

async function newExecution(taskNames: string[]) {
  const { db } = database;
  const name = `events-${++runs}`;
  const workflow = await workflowRepository.insert(db, {
    name,
    definition: JSON.stringify({ name, tasks: [] }),
  });
  const { execution } = await executionRepository.createExecutionWithTasks(db, {
    workflowId: workflow.id,
    workflowName: name,
    definition: workflow.definition,
    taskNames,
    temporalWorkflowId: `events-test-${workflow.id}`,
    status: 'Pending',
  });
  const tasks = await taskExecutionRepository.taskIds(db, execution.id);
  return { workflow, execution, tasks };
}

const log = (executionId: string, taskExecutionId: string | null, key: string, message = key) => ({
  executionId,
  taskExecutionId,
  dedupeKey: key,
  level: 'Info' as const,
  message,
  timeStamp: new Date(),
});

/** Every event of an execution, read page by page as a stream does. */
async function allEvents(executionId: string, pageSize = 1000): Promise<ExecutionEvent[]> {
  const events: ExecutionEvent[] = [];
  for (;;) {
    const page = await readEvents(database.db, executionId, events.at(-1)?.id ?? 0, pageSize);
    events.push(...page);
    if (page.length < pageSize) return events;
  }
}

const summary = (event: ExecutionEvent) => {
  switch (event.type) {
    case 'execution':
      return `execution ${event.data.status}`;
    case 'task':
      return `task ${event.data.name} ${event.data.status}`;
    case 'approval':
      return `approval ${event.data.taskName} ${event.data.status}`;
    case 'log':
      return `log ${event.data.message}`;
  }
};

describe('execution events', () => {
  it('are written by the database for every change, numbered 1, 2, 3... in order', async () => {
    const { db } = database;
    const { execution, tasks } = await newExecution(['A', 'B']);
    const a = tasks.get('A')!;
    const b = tasks.get('B')!;
    await executionRepository.markExecutionRunning(db, execution.id, [
      log(execution.id, null, 'started'),
    ]);
    await taskExecutionRepository.markTaskRunning(db, { id: a, attempt: 1, at: new Date() });
    // The same status again is no change, and no event.
    await taskExecutionRepository.markTaskRunning(db, { id: a, attempt: 1, at: new Date() });
    await taskExecutionRepository.recordAttempt(
      db,
      { id: a, attempt: 1, status: 'Completed', message: 'done', at: new Date(), output: 1 },
      [log(execution.id, a, 'a-said', 'A says hi')],
    );
    const approval = await approvalRepository.createApproval(db, {
      executionId: execution.id,
      taskExecutionId: b,
      taskName: 'B',
      comment: '',
    });
    await approvalRepository.decideApproval(db, {
      executionId: execution.id,
      approvalId: approval.id,
      decision: 'Approved',
      decidedBy: 'ann',
    });
    await executionRepository.markExecutionFinished(
      db,
      execution.id,
      { status: 'Completed', message: 'all done' },
      [log(execution.id, null, 'finished', 'Finished.')],
    );

    const events = await allEvents(execution.id);
    expect(events.map((event) => event.id)).toEqual(events.map((_, index) => index + 1));
    expect(events.map(summary)).toEqual([
      'execution Pending',
      'task A Pending',
      'task B Pending',
      // A status change and its log entries are one statement: the status event comes last.
      'log started',
      'execution Running',
      'task A Running',
      'log A says hi',
      'task A Completed',
      'approval B Pending',
      'approval B Approved',
      'log Finished.',
      'execution Completed',
    ]);
    expect(events.at(-1)).toMatchObject({
      type: 'execution',
      data: { status: 'Completed', message: 'all done' },
    });
    expect(events.filter(isTerminal)).toHaveLength(1);
    expect(
      events.find((event) => event.type === 'log' && event.data.taskExecutionId === a),
    ).toMatchObject({ data: { message: 'A says hi', level: 'Info', exception: null } });
    expect(
      events.find((event) => event.type === 'approval' && event.data.status === 'Approved'),
    ).toMatchObject({ data: { id: approval.id, taskExecutionId: b, decidedBy: 'ann' } });
    // From the middle: the rest, nothing before.
    expect((await readEvents(db, execution.id, 10, 100)).map((event) => event.id)).toEqual([
      11, 12,
    ]);
  });

  it('puts the execution status last in its transaction, whatever the order of the writes', async () => {
    const { db } = database;
    const { execution } = await newExecution(['A']);
    await executionRepository.markExecutionRunning(db, execution.id);
    // Recovery ends the execution first, then cancels its tasks and logs why, in one transaction.
    await executionRepository.finishAbandonedExecution(db, execution.id, {
      status: 'Failed',
      message: 'gone',
      at: new Date(),
    });
    const events = await allEvents(execution.id);
    expect(events.map(summary).slice(-3)).toEqual([
      'task A Canceled',
      'log gone',
      'execution Failed',
    ]);
  });

  it('number a thousand log entries of one statement in the order they were written', async () => {
    const { execution } = await newExecution([]);
    const entries = Array.from({ length: 1000 }, (_, index) =>
      log(execution.id, null, `n${index}`),
    );
    await logRepository.appendLogs(database.db, entries);
    const events = await allEvents(execution.id, 300);
    expect(events.slice(1).map(summary)).toEqual(entries.map((entry) => `log ${entry.message}`));
  });

  it('are never skipped by a reader following concurrent writers (commit order = number order)', async () => {
    const { db } = database;
    const { execution, tasks } = await newExecution(['A', 'B', 'C', 'D']);
    const writers = [...tasks.values()].map(async (taskExecutionId, writer) => {
      for (let n = 0; n < 40; n++) {
        await logRepository.appendLogs(db, [
          log(execution.id, taskExecutionId, `${writer}:${n}:a`),
          log(execution.id, taskExecutionId, `${writer}:${n}:b`),
        ]);
      }
    });
    const seen: ExecutionEvent[] = [];
    let writing = true;
    const done = Promise.all(writers).finally(() => (writing = false));
    // Follows as a stream does: only ever "after the last one seen".
    while (writing) {
      seen.push(...(await readEvents(db, execution.id, seen.at(-1)?.id ?? 0, 7)));
    }
    await done;
    for (let page = await readEvents(db, execution.id, seen.at(-1)?.id ?? 0, 1000); page.length;) {
      seen.push(...page);
      page = await readEvents(db, execution.id, seen.at(-1)!.id, 1000);
    }
    const total = 1 + tasks.size + 4 * 40 * 2;
    expect(seen.map((event) => event.id)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  });

  it('are numbered for 100,000 executions written by one statement (more than the lock table holds)', async () => {
    const { db } = database;
    const { workflow } = await newExecution([]);
    const runs = 100_000;
    await sql`
      insert into workflow_execution (id, workflow_id, workflow_name, definition, status, message,
        temporal_workflow_id, execution_start)
      select gen_random_uuid(), ${workflow.id}, ${workflow.name}, '{}', 'Completed', '',
        'events-bulk-' || ${workflow.id} || '-' || n, now()
      from generate_series(1, ${runs}::int) as n`.execute(db);
    const { rows } = await sql<{ executions: string; numbered: string }>`
      select count(*) as executions, count(*) filter (where e.seq = 1) as numbered
      from workflow_execution x join execution_event e on e.execution_id = x.id
      where x.temporal_workflow_id like ${`events-bulk-${workflow.id}-%`}`.execute(db);
    expect(rows[0]).toEqual({ executions: String(runs), numbered: String(runs) });
  });

  it('notify the execution channel with the execution id when they commit', async () => {
    const listener = new pg.Client({ connectionString: database.url });
    await listener.connect();
    try {
      await listener.query(`listen ${executionEventsChannel}`);
      const payloads: string[] = [];
      listener.on('notification', (message) => payloads.push(message.payload ?? ''));
      const { execution } = await newExecution(['A']);
      await expect.poll(() => payloads).toContain(execution.id);
    } finally {
      await listener.end();
    }
  });

  it('go with their execution when its workflow is deleted', async () => {
    const { db } = database;
    const { workflow, execution } = await newExecution(['A']);
    await logRepository.appendLogs(db, [log(execution.id, null, 'x')]);
    expect(await allEvents(execution.id)).toHaveLength(3);
    await workflowRepository.remove(db, workflow.id);
    const left = await db
      .selectFrom('executionEvent')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('executionId', '=', execution.id)
      .executeTakeFirstOrThrow();
    expect(Number(left.count)).toBe(0);
  });
});

describe('the migration', () => {
  it('gives executions that ran before it their events, the status last, and numbers on from there', async () => {
    const url = await createTestDatabase();
    const config = buildConfig({
      Database: { Url: url, PoolSize: 2 },
      Logging: { Level: 'silent' },
    });
    const older = await openDatabase(config, createLogger(config.Logging));
    try {
      const db = older.db;
      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
      const names = Object.keys(migrations);
      const before = names[names.indexOf('2026-11-25T00-00-00-execution-events') - 1]!;
      expect((await migrator.migrateTo(before)).error).toBeUndefined();
      const workflowId = crypto.randomUUID();
      const executionId = crypto.randomUUID();
      const taskId = crypto.randomUUID();
      await db
        .insertInto('workflow')
        .values({ id: workflowId, name: 'old', definition: '{}', modifiedDate: new Date() })
        .execute();
      await db
        .insertInto('workflowExecution')
        .values({
          id: executionId,
          workflowId,
          workflowName: 'old',
          definition: '{}',
          status: 'Completed',
          message: 'done',
          temporalWorkflowId: `t-${executionId}`,
          executionStart: new Date(),
          executionEnd: new Date(),
        })
        .execute();
      await db
        .insertInto('taskExecution')
        .values({
          id: taskId,
          executionId,
          workflowId,
          name: 'A',
          position: 0,
          status: 'Completed',
          message: 'ok',
          startTime: new Date(),
          endTime: new Date(),
        })
        .execute();
      await logRepository.appendLogs(db, [
        log(executionId, null, 'one'),
        log(executionId, taskId, 'two'),
      ]);

      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      const summaries = async () => {
        const events: ExecutionEvent[] = await readEvents(db, executionId, 0, 100);
        return events.map((event) => `${event.id} ${summary(event)}`);
      };
      expect(await summaries()).toEqual([
        '1 task A Completed',
        '2 log one',
        '3 log two',
        '4 execution Completed',
      ]);
      await logRepository.appendLogs(db, [log(executionId, null, 'three')]);
      expect((await summaries()).at(-1)).toBe('5 log three');
    } finally {
      await older.close();
    }
  });
});

describe('log lists', () => {
  it('page by cursor through an index, in the timeline with tasks or without', async () => {
    const { db } = database;
    const { execution, tasks } = await newExecution(['A']);
    const a = tasks.get('A')!;
    await logRepository.appendLogs(db, [
      log(execution.id, null, 'e1'),
      log(execution.id, a, 'a1'),
      log(execution.id, null, 'e2'),
      log(execution.id, a, 'a2'),
    ]);
    const everything = await logRepository.listExecutionLogs(
      db,
      execution.id,
      {},
      {
        includeTasks: true,
      },
    );
    expect(everything.items.map((entry) => [entry.message, entry.taskExecutionId])).toEqual([
      ['e1', null],
      ['a1', a],
      ['e2', null],
      ['a2', a],
    ]);
    const [first, second] = everything.items;
    const after = await logRepository.listExecutionLogs(
      db,
      execution.id,
      { after: first!.id, pageSize: 2 },
      { includeTasks: true },
    );
    expect(after.items.map((entry) => entry.message)).toEqual(['a1', 'e2']);
    const own = await logRepository.listExecutionLogs(db, execution.id, {
      after: first!.id,
      pageSize: 10,
    });
    expect(own.items.map((entry) => entry.message)).toEqual(['e2']);
    const task = await logRepository.listTaskLogs(
      db,
      { executionId: execution.id, id: a },
      { after: second!.id, pageSize: 10 },
    );
    expect(task.items.map((entry) => entry.message)).toEqual(['a2']);
    // An entry of another list is no cursor for this one, nor is an id of nothing; the last
    // entry is: the list ends there.
    await expect(
      logRepository.listExecutionLogs(db, execution.id, { after: second!.id, pageSize: 10 }),
    ).rejects.toMatchObject({ code: 'invalid' });
    await expect(
      logRepository.listExecutionLogs(db, execution.id, { after: randomUUID(), pageSize: 10 }),
    ).rejects.toMatchObject({ code: 'invalid' });
    const last = everything.items.at(-1)!;
    const ended = await logRepository.listExecutionLogs(
      db,
      execution.id,
      { after: last.id, pageSize: 10 },
      { includeTasks: true },
    );
    expect(ended.items).toEqual([]);

    // The plans: an index range scan from the cursor, no sort, however deep the page.
    const plans = await db.transaction().execute(async (trx) => {
      // Tables this small make a bitmap scan and a sort look as cheap: take both away, so the plan
      // shows whether an ordered index range scan exists at all.
      await sql`set local enable_seqscan = off`.execute(trx);
      await sql`set local enable_bitmapscan = off`.execute(trx);
      const explain = async (where: ReturnType<typeof sql>) => {
        const { rows } = await sql<{ 'QUERY PLAN': string }>`
          explain select id, message from log_entry where ${where} and seq > 5
          order by seq limit 100`.execute(trx);
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      };
      return [
        await explain(sql`execution_id = ${execution.id}`),
        await explain(sql`execution_id = ${execution.id} and task_execution_id is null`),
        await explain(sql`task_execution_id = ${a}`),
      ];
    });
    for (const plan of plans) {
      expect(plan).toMatch(/Index Scan using log_entry_\w+_seq_idx/);
      expect(plan).not.toMatch(/Sort/);
    }
  });
});
