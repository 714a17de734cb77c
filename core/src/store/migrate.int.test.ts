import { Migrator, sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '#platform/config/load.js';
import { createLogger } from '#platform/logging.js';
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
      'api_key',
      'approval',
      'approval_link',
      'audit_entry',
      'auth_failure',
      'concurrency_slot',
      'execution_event',
      'idempotency_key',
      'log_entry',
      'notification_delivery',
      'plugin',
      'plugin_configuration',
      'project',
      'project_member',
      'project_request_rate',
      'server_secret',
      'task_execution',
      'webhook_delivery',
      'webhook_refusal',
      'workflow',
      'workflow_execution',
      'workflow_revision',
      'workflow_trigger',
    ]);
    expect(await columns('workflow_revision')).toEqual({
      workflow_id: 'uuid',
      revision: 'integer',
      name: 'text',
      definition: 'text',
      created_at: 'timestamp with time zone',
      source: 'text null',
    });
    expect(await columns('webhook_delivery')).toEqual({
      trigger_id: 'uuid',
      webhook_id: 'text',
      execution_id: 'uuid',
      received_at: 'timestamp with time zone',
    });
    // A refused delivery keeps why, never its body.
    expect(await columns('webhook_refusal')).toEqual({
      id: 'uuid',
      trigger_id: 'uuid',
      webhook_id: 'text null',
      received_at: 'timestamp with time zone',
      status: 'integer',
      code: 'text',
      reason: 'text',
    });
    expect(await columns('workflow_trigger')).toMatchObject({ secret: 'text null' });
    // An API key's secret is not stored: only its hash.
    expect(await columns('api_key')).toEqual({
      id: 'uuid',
      project_id: 'uuid',
      name: 'text',
      lookup_id: 'text',
      hash: 'bytea',
      roles: 'jsonb',
      created_by: 'text',
      created_at: 'timestamp with time zone',
      expires_at: 'timestamp with time zone null',
      last_used_at: 'timestamp with time zone null',
      revoked_at: 'timestamp with time zone null',
    });
    expect(await columns('workflow_execution')).toMatchObject({ revision: 'integer null' });
    expect(await columns('plugin_configuration')).toEqual({
      id: 'uuid',
      name: 'text',
      type: 'text',
      version: 'text',
      specifications: 'jsonb',
      created_at: 'timestamp with time zone',
      modified_time: 'timestamp with time zone null',
      project_id: 'uuid',
    });
    expect(await columns('project_member')).toEqual({
      project_id: 'uuid',
      name: 'text',
      roles: 'jsonb',
      created_at: 'timestamp with time zone',
    });
    expect(await columns('project_request_rate')).toEqual({
      project_id: 'uuid',
      window_start: 'timestamp with time zone',
      count: 'integer',
      previous_count: 'integer',
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
      effects: 'text',
    });
    expect(await columns('concurrency_slot')).toEqual({
      execution_id: 'uuid',
      workflow_id: 'uuid',
      key: 'text',
      slot_limit: 'integer',
      holding: 'boolean',
      preempted: 'boolean',
      seq: 'bigint',
      queued_at: 'timestamp with time zone',
      held_at: 'timestamp with time zone null',
    });
    expect(await columns('auth_failure')).toEqual({
      key: 'text',
      failures: 'integer',
      window_started_at: 'timestamp with time zone',
      locked_until: 'timestamp with time zone null',
    });
  });

  it('index every list query', async () => {
    const { rows } = await sql<{ indexdef: string }>`
      select indexdef from pg_indexes where schemaname = 'public' order by indexname`.execute(db);
    const definitions = rows.map((row) => row.indexdef.replace(/^.* USING btree /, ''));
    expect(definitions).toEqual(
      expect.arrayContaining([
        '(workflow_id, execution_start DESC, id DESC)',
        '(workflow_id, status, execution_start DESC, id DESC)',
        '(project_id, execution_start DESC, id DESC)',
        '(project_id, status, execution_start DESC, id DESC)',
        '(execution_id, "position")',
        '(execution_id, seq)',
        '(task_execution_id, seq)',
        '(execution_id, requested_at)',
        '(status, requested_at, id)',
        '(workflow_id, created_at)',
        '(type, version)',
        '(name)',
        '(execution_id, dedupe_key)',
        '(execution_id, name)',
        '(workflow_id, revision)',
        '(trigger_id, webhook_id)',
        '(execution_id)',
        '(workflow_id, key, seq)',
        '(user_name, project_id, key)',
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

  it('cancels the Pending approvals of executions that had already ended', async () => {
    const url = await createTestDatabase();
    const config = buildConfig({ Database: { Url: url }, Logging: { Level: 'silent' } });
    const opened = await openDatabase(config, createLogger(config.Logging));
    try {
      const migrator = new Migrator({
        db: opened.db,
        provider: { getMigrations: async () => migrations },
      });
      const { error } = await migrator.migrateTo('2026-11-24T04-00-00-plugin-output-schema');
      expect(error).toBeUndefined();
      const ended = new Date('2026-11-20T10:00:00Z');
      const [w, e1, e2, t1, t2, a1, a2] = [1, 11, 12, 21, 22, 31, 32].map(
        (n) => `00000000-0000-4000-8000-0000000000${n.toString().padStart(2, '0')}`,
      );
      for (const statement of [
        sql`insert into workflow (id, name, definition, modified_date)
            values (${w}, 'old', '{}', now())`,
        sql`insert into workflow_execution (id, workflow_id, workflow_name, definition, status,
              message, temporal_workflow_id, execution_start, execution_end)
            values (${e1}, ${w}, 'old', '{}', 'Canceled', 'Canceled by admin.', 't-1', ${ended},
                    ${ended}),
                   (${e2}, ${w}, 'old', '{}', 'Paused', '', 't-2', ${ended}, null)`,
        sql`insert into task_execution (id, execution_id, workflow_id, name, position, status)
            values (${t1}, ${e1}, ${w}, 'Gate', 0, 'Canceled'),
                   (${t2}, ${e2}, ${w}, 'Gate', 0, 'WaitingForApproval')`,
        sql`insert into approval (id, execution_id, task_execution_id, task_name, status)
            values (${a1}, ${e1}, ${t1}, 'Gate', 'Pending'), (${a2}, ${e2}, ${t2}, 'Gate', 'Pending')`,
      ]) {
        await statement.execute(opened.db);
      }
      await migrateToLatest(opened.db);
      const rows = await opened.db
        .selectFrom('approval')
        .select(['id', 'status', 'decidedBy', 'decidedAt', 'reason'])
        .orderBy('id')
        .execute();
      expect(rows).toEqual([
        {
          id: a1,
          status: 'Canceled',
          decidedBy: 'system',
          decidedAt: ended,
          reason: 'The execution ended before a decision.',
        },
        {
          id: a2,
          status: 'Pending',
          decidedBy: null,
          decidedAt: null,
          reason: null,
        },
      ]);
    } finally {
      await opened.close();
    }
  });

  it('keeps existing workflows as revision 1, with the runs that ran that definition', async () => {
    const url = await createTestDatabase();
    const config = buildConfig({ Database: { Url: url }, Logging: { Level: 'silent' } });
    const opened = await openDatabase(config, createLogger(config.Logging));
    try {
      const migrator = new Migrator({
        db: opened.db,
        provider: { getMigrations: async () => migrations },
      });
      const { error } = await migrator.migrateTo('2026-11-25T03-00-00-auth-failures');
      expect(error).toBeUndefined();
      const modified = new Date('2026-11-20T10:00:00Z');
      const [w, same, older] = [1, 11, 12].map(
        (n) => `00000000-0000-4000-8000-0000000000${n.toString().padStart(2, '0')}`,
      );
      for (const statement of [
        sql`insert into workflow (id, name, definition, modified_date)
            values (${w}, 'old', '{"v":2}', ${modified})`,
        sql`insert into workflow_execution (id, workflow_id, workflow_name, definition, status,
              message, temporal_workflow_id, execution_start)
            values (${same}, ${w}, 'old', '{"v":2}', 'Completed', '', 't-1', ${modified}),
                   (${older}, ${w}, 'old', '{"v":1}', 'Completed', '', 't-2', ${modified})`,
      ]) {
        await statement.execute(opened.db);
      }
      await migrateToLatest(opened.db);
      expect(await opened.db.selectFrom('workflow').select(['id', 'revision']).execute()).toEqual([
        { id: w, revision: 1 },
      ]);
      expect(await opened.db.selectFrom('workflowRevision').selectAll().execute()).toEqual([
        {
          workflowId: w,
          revision: 1,
          name: 'old',
          definition: '{"v":2}',
          createdAt: modified,
          source: null,
        },
      ]);
      const runs = await opened.db
        .selectFrom('workflowExecution')
        .select(['id', 'revision'])
        .orderBy('id')
        .execute();
      expect(runs).toEqual([
        { id: same, revision: 1 },
        { id: older, revision: null },
      ]);
    } finally {
      await opened.close();
    }
  });

  it('moves what existed into the project default, where names stay unique per project', async () => {
    const url = await createTestDatabase();
    const config = buildConfig({ Database: { Url: url }, Logging: { Level: 'silent' } });
    const opened = await openDatabase(config, createLogger(config.Logging));
    try {
      const migrator = new Migrator({
        db: opened.db,
        provider: { getMigrations: async () => migrations },
      });
      expect(
        (await migrator.migrateTo('2026-11-28T05-00-00-trigger-authors')).error,
      ).toBeUndefined();
      const [w, e, c] = [1, 2, 3].map((n) => `00000000-0000-4000-8000-00000000000${n}`);
      for (const statement of [
        sql`insert into workflow (id, name, definition) values (${w}, 'old', '{}')`,
        sql`insert into workflow_execution (id, workflow_id, workflow_name, definition, status,
              message, temporal_workflow_id, execution_start)
            values (${e}, ${w}, 'old', '{}', 'Completed', '', 't-1', now())`,
        sql`insert into plugin_configuration (id, name, type, version) values (${c}, 'c', 'A/B', '1')`,
        sql`insert into idempotency_key (user_name, key, request_hash) values ('u', 'k', 'h')`,
      ]) {
        await statement.execute(opened.db);
      }
      await migrateToLatest(opened.db);

      const projects = await opened.db.selectFrom('project').selectAll().execute();
      expect(projects.map((project) => project.name)).toEqual(['default']);
      const defaultId = projects[0]!.id;
      for (const table of [
        'workflow',
        'workflowExecution',
        'pluginConfiguration',
        'idempotencyKey',
      ] as const) {
        expect(await opened.db.selectFrom(table).select('projectId').execute()).toEqual([
          { projectId: defaultId },
        ]);
      }
      const other = crypto.randomUUID();
      await opened.db.insertInto('project').values({ id: other, name: 'other' }).execute();
      const named = (projectId: string) => ({
        id: crypto.randomUUID(),
        projectId,
        name: 'old',
        definition: '{}',
        modifiedDate: new Date(),
      });
      await opened.db.insertInto('workflow').values(named(other)).execute();
      await expect(
        opened.db.insertInto('workflow').values(named(defaultId)).execute(),
      ).rejects.toMatchObject({ code: '23505' });
    } finally {
      await opened.close();
    }
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
