import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '../config/load.js';
import { createLogger } from '../logging.js';
import { openMigratedTestDatabase } from '../../../test/support/database.js';
import { createTestDatabase } from '../../../test/support/services.js';
import { openDatabase, type TrellisDatabase } from './database.js';
import { migrateToLatest, migrations } from './migrate.js';
import type { Database } from './tables.js';

let database: TrellisDatabase;
let db: Kysely<Database>;

beforeAll(async () => {
  database = await openMigratedTestDatabase();
  db = database.db;
});
afterAll(() => database?.close());

async function columns(table: string) {
  const { rows } = await sql<{ column_name: string; data_type: string; is_nullable: string }>`
    select column_name, data_type, is_nullable from information_schema.columns
    where table_schema = 'public' and table_name = ${table} order by ordinal_position`.execute(
    db.withoutPlugins(),
  );
  return Object.fromEntries(
    rows.map((row) => [
      row.column_name,
      `${row.data_type}${row.is_nullable === 'YES' ? ' null' : ''}`,
    ]),
  );
}

describe('migrations', () => {
  it('create every table of tables.ts with snake_case columns', async () => {
    const { rows } = await sql<{ table_name: string }>`
      select table_name from information_schema.tables
      where table_schema = 'public' and table_name not like 'kysely_%' order by table_name`.execute(
      db.withoutPlugins(),
    );
    expect(rows.map((row) => row.table_name)).toEqual([
      'approval',
      'execution_event',
      'execution_event_sequence',
      'idempotency_key',
      'log_entry',
      'plugin',
      'plugin_configuration',
      'task_execution',
      'workflow',
      'workflow_execution',
      'workflow_trigger',
    ]);
    expect(await columns('plugin_configuration')).toEqual({
      id: 'uuid',
      name: 'text',
      type: 'text',
      version: 'text',
      specifications: 'jsonb',
      created_at: 'timestamp with time zone',
      modified_time: 'timestamp with time zone null',
    });
    expect(await columns('log_entry')).toMatchObject({
      seq: 'bigint',
      dedupe_key: 'text',
      task_execution_id: 'uuid null',
      exception: 'text null',
      time_stamp: 'timestamp with time zone',
    });
    expect(await columns('plugin')).toMatchObject({
      package: 'bytea',
      parameters_schema: 'jsonb',
      output_schema: 'jsonb',
    });
  });

  it('index every list query', async () => {
    const { rows } = await sql<{ indexdef: string }>`
      select indexdef from pg_indexes where schemaname = 'public' order by indexname`.execute(db);
    const definitions = rows.map((row) => row.indexdef.replace(/^.* USING btree /, ''));
    expect(definitions).toEqual(
      expect.arrayContaining([
        '(workflow_id, execution_start DESC)',
        '(workflow_id, status, execution_start DESC)',
        '(execution_id, "position")',
        '(execution_id, seq)',
        '(task_execution_id, seq)',
        '(execution_id, requested_at)',
        '(workflow_id, created_at)',
        '(type, version)',
        '(name)',
        '(execution_id, dedupe_key)',
        '(execution_id, name)',
      ]),
    );
  });

  it('is a no-op when the schema is current, and records each migration once', async () => {
    await migrateToLatest(db);
    const applied = await db
      .withoutPlugins()
      .selectFrom('kysely_migration' as never)
      .select(sql<string>`name`.as('name'))
      .execute();
    expect(applied.map((row) => row.name)).toEqual(Object.keys(migrations));
  });

  it('migrates concurrently from several processes without failing', async () => {
    const url = await createTestDatabase();
    const config = buildConfig({
      Database: { Url: url, PoolSize: 2 },
      Logging: { Level: 'silent' },
    });
    const logger = createLogger(config.Logging);
    const opened = await Promise.all([openDatabase(config, logger), openDatabase(config, logger)]);
    try {
      await Promise.all(opened.map(({ db: each }) => migrateToLatest(each, logger)));
      const { rows } = await sql<{ count: string }>`select count(*) from kysely_migration`.execute(
        opened[0].db,
      );
      expect(Number(rows[0]!.count)).toBe(Object.keys(migrations).length);
    } finally {
      await Promise.all(opened.map((each) => each.close()));
    }
  });

  it('cascade: deleting a workflow removes its triggers, executions, tasks, approvals and logs', async () => {
    const workflowId = crypto.randomUUID();
    const triggerId = crypto.randomUUID();
    const executionId = crypto.randomUUID();
    const taskId = crypto.randomUUID();
    await db
      .insertInto('workflow')
      .values({ id: workflowId, name: 'cascade', definition: '{}', modifiedDate: new Date() })
      .execute();
    await db
      .insertInto('workflowTrigger')
      .values({
        id: triggerId,
        workflowId,
        type: 'Manual',
        status: 'Active',
        properties: '{}',
        lastModified: new Date(),
      })
      .execute();
    await db
      .insertInto('workflowExecution')
      .values({
        id: executionId,
        workflowId,
        workflowName: 'cascade',
        definition: '{}',
        status: 'Running',
        message: '',
        triggerId,
        temporalWorkflowId: `t-${executionId}`,
        executionStart: new Date(),
        executionEnd: null,
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
        status: 'Pending',
        message: '',
        startTime: null,
        endTime: null,
      })
      .execute();
    await db
      .insertInto('approval')
      .values({
        id: crypto.randomUUID(),
        executionId,
        taskExecutionId: taskId,
        taskName: 'A',
        comment: '',
        status: 'Pending',
        requestedAt: new Date(),
        decidedAt: null,
        decidedBy: null,
      })
      .execute();
    await db
      .insertInto('logEntry')
      .values([
        {
          id: crypto.randomUUID(),
          executionId,
          taskExecutionId: null,
          dedupeKey: 'e1',
          level: 'Info',
          message: 'm',
          exception: null,
          timeStamp: new Date(),
        },
        {
          id: crypto.randomUUID(),
          executionId,
          taskExecutionId: taskId,
          dedupeKey: 't1',
          level: 'Info',
          message: 'm',
          exception: null,
          timeStamp: new Date(),
        },
      ])
      .execute();

    // A trigger removed on its own leaves the run it fired, unlinked.
    await db.deleteFrom('workflowTrigger').where('id', '=', triggerId).execute();
    const run = await db
      .selectFrom('workflowExecution')
      .select('triggerId')
      .where('id', '=', executionId)
      .executeTakeFirstOrThrow();
    expect(run.triggerId).toBeNull();

    await db.deleteFrom('workflow').where('id', '=', workflowId).execute();
    for (const table of [
      'workflowExecution',
      'taskExecution',
      'approval',
      'logEntry',
      'executionEvent',
      'executionEventSequence',
    ] as const) {
      const { count } = await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .executeTakeFirstOrThrow();
      expect(Number(count), table).toBe(0);
    }
  });

  it('rejects duplicate log dedupe keys per execution and statuses outside the enums', async () => {
    const workflowId = crypto.randomUUID();
    const executionId = crypto.randomUUID();
    await db
      .insertInto('workflow')
      .values({ id: workflowId, name: 'checks', definition: '{}', modifiedDate: new Date() })
      .execute();
    const execution = {
      id: executionId,
      workflowId,
      workflowName: 'checks',
      definition: '{}',
      status: 'Running' as const,
      message: '',
      triggerId: null,
      temporalWorkflowId: `t-${executionId}`,
      executionStart: new Date(),
      executionEnd: null,
    };
    await db.insertInto('workflowExecution').values(execution).execute();
    const entry = {
      executionId,
      taskExecutionId: null,
      dedupeKey: 'same',
      level: 'Info' as const,
      message: 'm',
      exception: null,
      timeStamp: new Date(),
    };
    await db
      .insertInto('logEntry')
      .values({ id: crypto.randomUUID(), ...entry })
      .execute();
    await expect(
      db
        .insertInto('logEntry')
        .values({ id: crypto.randomUUID(), ...entry })
        .execute(),
    ).rejects.toMatchObject({ code: '23505' });
    await expect(
      db
        .insertInto('workflowExecution')
        .values({
          ...execution,
          id: crypto.randomUUID(),
          temporalWorkflowId: 'x',
          status: 'Bogus' as never,
        })
        .execute(),
    ).rejects.toMatchObject({ code: '23514' });
  });

  it('can be rolled back completely', async () => {
    const url = await createTestDatabase();
    const config = buildConfig({ Database: { Url: url }, Logging: { Level: 'silent' } });
    const opened = await openDatabase(config, createLogger(config.Logging));
    try {
      await migrateToLatest(opened.db);
      const names = Object.keys(migrations).reverse();
      for (const name of names) await migrations[name]!.down!(opened.db);
      const { rows } = await sql<{ count: string }>`
        select count(*) from information_schema.tables
        where table_schema = 'public' and table_name not like 'kysely_%'`.execute(opened.db);
      expect(Number(rows[0]!.count)).toBe(0);
    } finally {
      await opened.close();
    }
  });
});
