/**
 * Faults (issue 5, docs/ARCHITECTURE.md#durability): the worker SIGKILLed and
 * replaced, the API SIGKILLed mid-request and restarted, the Temporal dev server (persisted to a
 * file) stopped and started again, PostgreSQL restarted, each in the middle of running
 * executions. After each, every execution completes and no row is lost or duplicated.
 *
 * Everything here is private to this file: its own PostgreSQL cluster and Temporal dev server
 * (restarting the shared ones would break the other test files), and Trellis as separate `api`
 * and `worker` processes configured by a file, as an operator runs them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '#platform/config/load.js';
import { openDatabase, type TrellisDatabase } from '#store/database.js';
import type { Database } from '#store/tables.js';
import { createLogger } from '#platform/logging.js';
import { freePort } from '#platform/temporal/dev-server.js';
import { createTrellisClient, type TrellisClient } from '../../sdk/src/index.js';
import { createDatabase } from '../support/postgres.js';
import { addWorkflow, execute } from '../support/engine-support.js';
import { runConcurrently } from './support/concurrency.js';
import { ledgerOf, waitUntilSettled, type Ledger } from './support/ledger.js';
import {
  startPrivatePostgres,
  startPrivateTemporal,
  type PrivatePostgres,
  type PrivateTemporal,
} from './support/private-services.js';
import {
  spawnTrellis,
  writeTrellisConfig,
  type TrellisProcess,
} from './support/trellis-process.js';
import {
  chainDefinition,
  expectedChainLogs,
  uniqueWorkflowName,
  type Step,
} from './support/workload.js';

const admin = { username: 'admin', password: 'faults-admin-password' };
const logger = createLogger({ Level: 'warn' }, { component: 'faults-test' });

let directory: string;
let postgres: PrivatePostgres;
let temporal: PrivateTemporal;
let configFile: string;
let database: TrellisDatabase;
let db: Kysely<Database>;
let api: TrellisProcess;
let worker: TrellisProcess;
let client: TrellisClient;
let temporalConnection: Connection;
let temporalClient: Client;

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'trellis-faults-'));
  [postgres, temporal] = await Promise.all([
    startPrivatePostgres(),
    startPrivateTemporal({ logger, dbFile: path.join(directory, 'temporal.db') }),
  ]);
  const databaseUrl = await createDatabase(postgres.adminUrl, 'trellis_faults');
  configFile = await writeTrellisConfig(path.join(directory, 'trellis.config.json'), {
    // A fixed port: the restarted API is where the client expects it.
    Server: { Host: '127.0.0.1', Port: await freePort() },
    // The worker's probes: any free port (test files run side by side).
    Metrics: { WorkerPort: 0 },
    DataDirectory: path.join(directory, 'data'),
    Database: { Url: databaseUrl, PoolSize: 5 },
    Temporal: { Address: temporal.address, Namespace: 'default', TaskQueue: 'faults' },
    Security: {
      Basic: {
        Enabled: true,
        Users: [{ Name: admin.username, Password: admin.password, Roles: ['admin'] }],
      },
    },
    Logging: { Level: 'warn' },
  });
  api = await spawnTrellis({ role: 'api', configFile });
  worker = await spawnTrellis({ role: 'worker', configFile });
  // Silent: its idle connections die on purpose when PostgreSQL restarts.
  const quiet = createLogger({ Level: 'silent' });
  database = await openDatabase(
    buildConfig({ Database: { Url: databaseUrl, PoolSize: 2 }, Logging: { Level: 'silent' } }),
    quiet,
  );
  db = database.db;
  client = createTrellisClient({ baseUrl: api.url!, basic: admin });
  temporalConnection = await Connection.connect({ address: temporal.address });
  temporalClient = new Client({ connection: temporalConnection, namespace: 'default' });
}, 240_000);

afterAll(async () => {
  await api?.kill();
  await worker?.kill();
  await database?.close();
  await temporalConnection?.close();
  await temporal?.stop();
  await postgres?.stop();
  if (directory) await rm(directory, { recursive: true, force: true });
});

/** Stores a chain and starts `count` executions of it, 10 requests at a time. */
async function startBatch(steps: Step[], count: number) {
  const workflowId = await addWorkflow(
    client,
    chainDefinition(uniqueWorkflowName('faults'), steps),
  );
  const executionIds = await runConcurrently(count, 10, () => execute(client, workflowId));
  return { workflowId, executionIds };
}

/** Resolves once at least `count` of the workflow's tasks are Running: the fault lands mid-run. */
async function untilTasksRunning(workflowId: string, count = 1): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const row = await db
      .selectFrom('taskExecution')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('workflowId', '=', workflowId)
      .where('status', '=', 'Running')
      .executeTakeFirstOrThrow();
    if (Number(row.count) >= count) return;
    if (Date.now() > deadline) throw new Error(`No ${count} tasks Running within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Resolves once the workflow has at least `count` execution rows. */
async function waitForRows(workflowId: string, count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await ledgerOf(db, workflowId)).executions < count) {
    if (Date.now() > deadline) throw new Error(`No ${count} execution rows within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * `waitUntilSettled`, and when it times out, what an operator would look at next: whether the
 * API and worker still live (and what they last wrote), and what Temporal says one run still
 * active is waiting for.
 */
async function settled(workflowId: string, count: number, timeoutMs: number): Promise<Ledger> {
  try {
    return await waitUntilSettled(db, workflowId, count, timeoutMs);
  } catch (error) {
    const stuck = await db
      .selectFrom('workflowExecution')
      .select('temporalWorkflowId')
      .where('workflowId', '=', workflowId)
      .where('status', 'in', ['Pending', 'Running'])
      .executeTakeFirst()
      .catch(() => undefined);
    let temporalSays = 'no active execution row';
    if (stuck) {
      const handle = temporalClient.workflow.getHandle(stuck.temporalWorkflowId);
      temporalSays = await handle
        .describe()
        .then((run) =>
          JSON.stringify({
            status: run.status.name,
            historyLength: run.historyLength,
            pendingActivities: run.raw.pendingActivities?.map((activity) => ({
              type: activity.activityType?.name,
              attempt: activity.attempt,
              lastFailure: activity.lastFailure?.message,
            })),
          }),
        )
        .catch((reason: Error) => `describe failed: ${reason.message}`);
    }
    const liveness = async (process: TrellisProcess) => {
      const ended = await Promise.race([process.exited, Promise.resolve(null)]);
      const state = ended ? `exited (${ended.code ?? ended.signal})` : 'running';
      return `${process.role} ${state}; last output:\n${process.output().slice(-3_000)}`;
    };
    throw new Error(
      [
        (error as Error).message,
        `Temporal: ${temporalSays}`,
        await liveness(worker),
        await liveness(api),
      ].join('\n'),
    );
  }
}

/**
 * Every one of `count` executions Completed, with exactly the rows and logs a clean run has,
 * and one Warning more for each run a crash cut short (what it had not written died with it).
 */
function expectExactLedger(ledger: Ledger, steps: Step[], count: number): void {
  const logs = expectedChainLogs(steps);
  expect(ledger).toEqual({
    executions: count,
    executionsByStatus: { Completed: count },
    active: 0,
    tasks: count * steps.length,
    tasksByStatus: { Completed: count * steps.length },
    retriedTasks: 0,
    interruptedAttempts: ledger.interruptedAttempts,
    executionLogs: count * logs.executionLogs,
    taskLogs: count * logs.taskLogs + ledger.interruptedAttempts,
    duplicateLogs: 0,
  });
}

describe('faults', () => {
  it('a worker SIGKILLed mid-run and replaced: every execution completes, rows exact', async () => {
    const steps: Step[] = [{ delayMs: 1500 }, 'noop', { delayMs: 1000 }];
    const { workflowId } = await startBatch(steps, 20);
    await untilTasksRunning(workflowId, 5);
    await worker.kill();
    worker = await spawnTrellis({ role: 'worker', configFile });

    const ledger = await settled(workflowId, 20, 150_000);
    expectExactLedger(ledger, steps, 20);
    // The tasks Running when it died are found by their next runs and recorded as interrupted.
    expect(ledger.interruptedAttempts).toBeGreaterThan(0);
  }, 240_000);

  it('the API SIGKILLed mid-request and restarted: every acknowledged execution completes once', async () => {
    const steps: Step[] = ['noop', { delayMs: 300 }];
    const workflowId = await addWorkflow(
      client,
      chainDefinition(uniqueWorkflowName('faults-api'), steps),
    );
    let answered = 0;
    const requests = runConcurrently(60, 20, async () => {
      try {
        const executionId = await execute(client, workflowId);
        answered += 1;
        return executionId;
      } catch {
        return null; // the connection died with the API
      }
    });
    // Kill it while requests are in flight: after the first answers, long before the last.
    const deadline = Date.now() + 30_000;
    while (answered < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await api.kill();
    const acknowledged = (await requests).filter((id): id is string => id !== null);
    expect(acknowledged.length).toBeGreaterThanOrEqual(5);
    expect(acknowledged.length).toBeLessThan(60);

    api = await spawnTrellis({ role: 'api', configFile });
    // The restarted API takes requests at the same address.
    const after = await runConcurrently(5, 5, () => execute(client, workflowId));
    for (const executionId of [...acknowledged, ...after]) {
      const finished = await client.waitForExecution(workflowId, executionId, {
        timeoutMs: 90_000,
      });
      expect(finished.status).toBe('Completed');
      const tasks = await client.GET('/workflows/{workflowId}/executions/{executionId}/tasks', {
        params: { path: { workflowId, executionId } },
      });
      expect(tasks.map((task) => task.status)).toEqual(['Completed', 'Completed']);
    }
    const ledger = await ledgerOf(db, workflowId);
    expect(ledger.duplicateLogs).toBe(0);
    expect(ledger.retriedTasks).toBe(0);
  }, 240_000);

  /**
   * `startExecution` (server/src/executions/start-execution.ts) commits the execution and task
   * rows, then starts the Temporal workflow. An API killed between the two leaves rows that say
   * Running with no run behind them until execution recovery (recover-executions.ts, run by
   * every API at start-up and periodically) starts the missing run. The window is as long as
   * Temporal takes to accept a start; here Temporal is stopped for a moment so that every
   * request is inside it when the API dies.
   */
  it('an API killed between recording an execution and starting its run strands nothing', async () => {
    const steps: Step[] = ['noop'];
    const workflowId = await addWorkflow(
      client,
      chainDefinition(uniqueWorkflowName('faults-strand'), steps),
    );
    await temporal.stopServer();
    const requests = runConcurrently(5, 5, () => execute(client, workflowId).catch(() => null));
    await waitForRows(workflowId, 5);
    await api.kill();
    await requests;
    await temporal.start();
    api = await spawnTrellis({ role: 'api', configFile });

    // The restarted API's recovery starts the missing runs once they pass its grace period.
    const ledger = await waitUntilSettled(db, workflowId, 5, 20_000).catch(() => null);
    const stranded: string[] = [];
    for (const row of await db
      .selectFrom('workflowExecution')
      .select(['id', 'temporalWorkflowId'])
      .where('workflowId', '=', workflowId)
      .where('status', 'in', ['Pending', 'Running'])
      .execute()) {
      try {
        await temporalClient.workflow.getHandle(row.temporalWorkflowId).describe();
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
        stranded.push(row.id);
      }
    }
    expect(stranded, 'executions Running with no Temporal run behind them').toEqual([]);
    expect(ledger).not.toBeNull();
  }, 240_000);

  it('the Temporal dev server stopped and started again mid-run: every execution completes, rows exact', async () => {
    const steps: Step[] = [{ delayMs: 1000 }, 'noop', { delayMs: 1000 }];
    const { workflowId } = await startBatch(steps, 20);
    await untilTasksRunning(workflowId, 5);
    await temporal.restart({ downForMs: 2_000 });

    const ledger = await settled(workflowId, 20, 180_000);
    expectExactLedger(ledger, steps, 20);
  }, 240_000);

  it('PostgreSQL restarted mid-run: every execution completes, rows exact', async () => {
    const steps: Step[] = [{ delayMs: 1000 }, 'noop', { delayMs: 1000 }];
    const { workflowId } = await startBatch(steps, 20);
    await untilTasksRunning(workflowId, 5);
    await postgres.restart();

    const ledger = await settled(workflowId, 20, 180_000);
    expectExactLedger(ledger, steps, 20);
    // The API answers again once the database is back.
    const listed = await client.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    expect(listed).toHaveLength(20);
  }, 240_000);
});
