/**
 * Issue 27, item 10: a Database/PostgreSql statement ends on the server when its task does (a
 * timeout, a cancel), and no task keeps a statement running longer than the installation allows
 * (`Plugins.Database.MaxStatementTimeoutMilliseconds`).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAs, loopbackAllowed, startTrellis, type Trellis } from '../support/harness.js';
import { createTestDatabase, testServices } from '../support/services.js';
import {
  definition,
  eventually,
  start,
  taskLogs,
  tasksOf,
  untilStatuses,
} from '../support/engine-support.js';

let trellis: Trellis;
/** The database tasks run their statements in (not Trellis's own). */
let connectionString: string;
/** Reads pg_stat_activity of the test server, as its administrator. */
let admin: pg.Client;

beforeAll(async () => {
  connectionString = await createTestDatabase();
  admin = new pg.Client({ connectionString: testServices().pgAdminUrl });
  [trellis] = await Promise.all([
    startTrellis({
      worker: true,
      config: {
        ...loopbackAllowed,
        Plugins: {
          ...loopbackAllowed.Plugins,
          Database: { MaxStatementTimeoutMilliseconds: 10_000 },
          // A task without timeoutMilliseconds is stopped after this long.
          Sandbox: { TimeoutMilliseconds: 1500 },
        },
      },
    }),
    admin.connect(),
  ]);
});
afterAll(async () => {
  await trellis?.stop();
  await admin?.end();
});

/** A task sleeping in PostgreSQL, its statement tagged so pg_stat_activity finds it. */
function sleeper(tag: string, extra: Record<string, unknown> = {}, specifications = {}) {
  return {
    name: 'Sleep',
    type: {
      plugin: 'Database/PostgreSql',
      specifications: { connectionString, ...specifications },
    },
    parameters: { sql: `select pg_sleep(60) /* ${tag} */` },
    ...extra,
  };
}

/** The statements carrying the tag that the server is still running. */
async function running(tag: string): Promise<number> {
  const { rows } = await admin.query<{ count: number }>(
    "select count(*)::int as count from pg_stat_activity where state = 'active' and query like $1",
    [`%/* ${tag} */%`],
  );
  return rows[0]!.count;
}

const gone = (tag: string) =>
  eventually(async () => expect(await running(tag)).toBe(0), 5_000).then(() => true);

describe('Database/PostgreSql statements end with their task', () => {
  it("a task's timeout ends its statement on the server, not only the connection", async () => {
    const tag = randomUUID();
    const client = trellis.client(basicAs('workflow'));
    const { workflowId, executionId } = await start(
      client,
      definition([sleeper(tag, { timeoutMilliseconds: 1500 })]),
    );
    await eventually(async () => expect(await running(tag)).toBe(1));
    const execution = await client.waitForExecution(workflowId, executionId, { timeoutMs: 30_000 });
    expect(execution.status).toBe('Failed');
    expect(await gone(tag)).toBe(true);
  });

  it('a canceled run ends its statement on the server', async () => {
    const tag = randomUUID();
    const client = trellis.client(basicAs('workflow'));
    const { workflowId, executionId } = await start(
      client,
      definition([sleeper(tag, { timeoutMilliseconds: 60_000 })]),
    );
    await untilStatuses(client, workflowId, executionId, { Sleep: 'Running' });
    await eventually(async () => expect(await running(tag)).toBe(1));
    await client.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path: { workflowId, executionId } },
    });
    const execution = await client.waitForExecution(workflowId, executionId, { timeoutMs: 30_000 });
    expect(execution.status).toBe('Canceled');
    expect(await gone(tag)).toBe(true);
  });

  it("the sandbox's time limit, for a task without a timeout, ends its statement on the server", async () => {
    const tag = randomUUID();
    const client = trellis.client(basicAs('workflow'));
    const { workflowId, executionId } = await start(client, definition([sleeper(tag)]));
    await eventually(async () => expect(await running(tag)).toBe(1));
    const execution = await client.waitForExecution(workflowId, executionId, { timeoutMs: 30_000 });
    expect(execution.status).toBe('Failed');
    const { Sleep } = await tasksOf(client, workflowId, executionId);
    expect(Sleep!.message).toMatch(/took longer than its time limit of 1500 ms/);
    expect(await gone(tag)).toBe(true);
  });

  it('a statement timeout above the installation limit, or none (0), is held to the limit, and the task log says so', async () => {
    const tag = randomUUID();
    const client = trellis.client(basicAs('workflow'));
    const asking = (name: string, asked: number) => ({
      ...sleeper(tag, { timeoutMilliseconds: 60_000 }, { statementTimeoutMilliseconds: asked }),
      name,
    });
    const { workflowId, executionId } = await start(
      client,
      definition([asking('Above', 600_000), asking('None', 0)]),
    );
    const execution = await client.waitForExecution(workflowId, executionId, {
      timeoutMs: 30_000,
    });
    expect(execution.status).toBe('Failed');
    const tasks = await tasksOf(client, workflowId, executionId);
    for (const [name, asked] of [
      ['Above', 600_000],
      ['None', 0],
    ] as const) {
      expect(tasks[name]!.message).toMatch(/canceling statement due to statement timeout/);
      expect(await taskLogs(client, workflowId, executionId, tasks[name]!.id)).toContain(
        `statementTimeoutMilliseconds ${asked} asks for more than this installation allows ` +
          '(Plugins.Database.MaxStatementTimeoutMilliseconds): the statement may run 10000 ms.',
      );
    }
    expect(await running(tag)).toBe(0);
  });
});
