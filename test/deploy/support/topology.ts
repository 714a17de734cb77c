/**
 * The production topology as processes (README "Running in production"): two `--role api` and
 * two `--role worker` processes of the compiled build, run from the files the image's runtime
 * stage holds (deploy/Dockerfile) with the commands and the environment of deploy/compose.yaml's
 * api and worker services on the image's defaults, against one PostgreSQL and a Temporal (the
 * dev server, or a cluster: test/deploy/topology*.test.ts). Executions are started through both
 * APIs; one API and one worker (and, on a cluster, a Temporal service) are SIGKILLed in the
 * middle of it. Every execution completes, and the database records each task of each execution
 * exactly once.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '#platform/config/load.js';
import { openDatabase, type TrellisDatabase } from '#store/database.js';
import type { Database } from '#store/tables.js';
import { createLogger } from '#platform/logging.js';
import { hashPassword } from '#platform/security/password.js';
import { freePort } from '#platform/temporal/dev-server.js';
import { createTrellisClient, type TrellisClient } from '../../../sdk/src/index.js';
import { addWorkflow, execute } from '../../support/engine-support.js';
import { runConcurrently } from '../../resilience/support/concurrency.js';
import { ledgerOf, waitUntilSettled } from '../../resilience/support/ledger.js';
import { spawnTrellis, type TrellisProcess } from '../../resilience/support/trellis-process.js';
import {
  chainDefinition,
  expectedChainLogs,
  uniqueWorkflowName,
  type Step,
} from '../../resilience/support/workload.js';
import { createTestDatabase, uniqueTaskQueue } from '../../support/services.js';
import { ensureCompiledBuild } from './compiled.js';
import {
  configKnows,
  imageEnvironment,
  loadCompose,
  readDockerfile,
  serviceEnvironment,
  stageRuntimeImage,
} from './recipes.js';

const password = 'topology-admin-password';
const executions = 60;
// A sandboxed plugin among them: its sandbox runs a module from the install folder.
const steps: Step[] = [{ delayMs: 800 }, 'json', { delayMs: 400 }];

/** The Temporal a topology runs against, and what it does to it in the middle of the load. */
export interface TopologyTemporal {
  /** How the test names it (`the dev server`, `a Temporal cluster`). */
  name: string;
  /** Starts it (its files, if any, in `folder`); `address` is read after. */
  start(folder: string): Promise<void>;
  address: string;
  /** Kills part of it with the api and the worker, and brings it back. */
  chaos?(): Promise<void>;
  /** More it must show once every execution completed. */
  check?(db: Kysely<Database>, workflowId: string): Promise<void>;
  stop?(): Promise<void>;
}

/** The topology's test, against `temporal`. */
export function describeTopology(temporal: TopologyTemporal): void {
  let folder: string;
  let databaseUrl: string;
  let database: TrellisDatabase;
  let db: Kysely<Database>;
  const apis: TrellisProcess[] = [];
  const workers: TrellisProcess[] = [];

  /**
   * What each process differs in from its container: the addresses this machine has, the test
   * file's own task queue on the shared Temporal, loopback instead of every interface, and a port
   * and data directory of its own (containers each have theirs).
   */
  async function overrides(taskQueue: string): Promise<Record<string, string>> {
    return {
      TRELLIS__Database__Url: databaseUrl,
      TRELLIS__Temporal__Address: temporal.address,
      TRELLIS__Temporal__TaskQueue: taskQueue,
      TRELLIS__Server__Host: '127.0.0.1',
      TRELLIS__Server__Port: String(await freePort()),
      TRELLIS__DataDirectory: await mkdtemp(path.join(folder, 'data-')),
      // Where the metrics endpoints exist, each worker's probe port too (two workers, one host).
      ...(configKnows('Metrics.WorkerPort')
        ? { TRELLIS__Metrics__WorkerPort: String(await freePort()) }
        : {}),
    };
  }

  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'trellis-topology-'));
    await temporal.start(folder);
    const [, url, adminPasswordHash] = await Promise.all([
      ensureCompiledBuild(),
      createTestDatabase(),
      hashPassword(password),
    ]);
    databaseUrl = url;
    // deploy/.env as an operator fills it in.
    const compose = loadCompose({
      POSTGRES_PASSWORD: 'unused: the test database has its own URL',
      TRELLIS_ADMIN_PASSWORD: adminPasswordHash,
      TRELLIS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    });
    const image = imageEnvironment(readDockerfile().at(-1)!);
    // The image's WORKDIR: what the processes run and where they start.
    const install = await stageRuntimeImage(await mkdtemp(path.join(folder, 'app-')));
    const queue = uniqueTaskQueue();
    const start = async (role: 'api' | 'worker') => {
      const service = compose.services[role]!;
      expect(service.command).toEqual(['--role', role]);
      return spawnTrellis({
        role,
        launcher: path.join(install, 'dist/bin/trellis.js'),
        cwd: install,
        env: {
          ...image,
          ...serviceEnvironment(service),
          ...(await overrides(queue)),
        },
      });
    };
    // As compose starts them: both APIs at once (their migrations take turns under the
    // migrator's lock), then the workers.
    apis.push(...(await Promise.all([start('api'), start('api')])));
    workers.push(...(await Promise.all([start('worker'), start('worker')])));
    database = await openDatabase(
      buildConfig({ Database: { Url: databaseUrl, PoolSize: 2 }, Logging: { Level: 'silent' } }),
      createLogger({ Level: 'silent' }),
    );
    db = database.db;
  }, 240_000);

  afterAll(async () => {
    await Promise.all([...apis, ...workers].map((process) => process.kill()));
    await database?.close();
    await temporal.stop?.();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  /** Resolves once at least `count` of the workflow's tasks are Running. */
  async function untilTasksRunning(workflowId: string, count: number): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const row = await db
        .selectFrom('taskExecution')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('workflowId', '=', workflowId)
        .where('status', '=', 'Running')
        .executeTakeFirstOrThrow();
      if (Number(row.count) >= count) return;
      if (Date.now() > deadline) throw new Error(`No ${count} tasks Running within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  describe(`two api and two worker processes on ${temporal.name}`, () => {
    it(`lose and duplicate nothing when an api and a worker${temporal.chaos ? " (and Temporal's history service)" : ''} are SIGKILLed under load`, async () => {
      const clients: TrellisClient[] = apis.map((api) =>
        createTrellisClient({ baseUrl: api.url!, basic: { username: 'admin', password } }),
      );
      // Both APIs serve the same data.
      const workflowId = await addWorkflow(
        clients[0]!,
        chainDefinition(uniqueWorkflowName('topology'), steps),
      );
      expect(
        (await clients[1]!.GET('/workflows/{workflowId}', { params: { path: { workflowId } } })).id,
      ).toBe(workflowId);

      // A client that spreads its requests over both APIs, and sends a request the first API did
      // not answer to the other one, as a load balancer would. The second half of the requests
      // waits until both workers are busy, and the kill comes while they are being sent.
      let acknowledged = 0;
      let unanswered = 0;
      const workersBusy = untilTasksRunning(workflowId, 4);
      const executionIds = runConcurrently(executions, 6, async (index) => {
        if (index >= executions / 3) await workersBusy;
        await new Promise((resolve) => setTimeout(resolve, 20));
        const first = index % 2;
        try {
          const executionId = await execute(clients[first]!, workflowId);
          acknowledged += 1;
          return executionId;
        } catch {
          unanswered += 1;
          const executionId = await execute(clients[1 - first]!, workflowId);
          acknowledged += 1;
          return executionId;
        }
      });

      await workersBusy;
      const deadline = Date.now() + 60_000;
      while (acknowledged < executions / 2 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const [killedApi, killedWorker] = [apis[0]!, workers[0]!];
      await Promise.all([killedApi.kill(), killedWorker.kill(), temporal.chaos?.()]);
      expect(await killedApi.exited).toMatchObject({ signal: 'SIGKILL' });
      expect(await killedWorker.exited).toMatchObject({ signal: 'SIGKILL' });

      const ids = await executionIds;
      expect(acknowledged).toBe(executions);
      // The kill landed while requests were still being sent: later ones went to the other API.
      expect(unanswered).toBeGreaterThan(0);
      expect(new Set(ids).size).toBe(executions);

      // Requests the killed API took but never answered may have recorded an execution: the
      // surviving API's recovery starts its run. So at least every acknowledged execution exists,
      // at most one more per unanswered request, and every one of them completes.
      const ledger = await waitUntilSettled(db, workflowId, executions, 75_000);
      expect(ledger.executions).toBeGreaterThanOrEqual(executions);
      expect(ledger.executions).toBeLessThanOrEqual(executions + unanswered);
      const count = ledger.executions;
      const logs = expectedChainLogs(steps);
      expect(ledger).toEqual({
        executions: count,
        executionsByStatus: { Completed: count },
        active: 0,
        tasks: count * steps.length,
        tasksByStatus: { Completed: count * steps.length },
        retriedTasks: 0,
        // A run the SIGKILL cut short is found by the next and logged once as interrupted.
        interruptedAttempts: ledger.interruptedAttempts,
        executionLogs: count * logs.executionLogs,
        taskLogs: count * logs.taskLogs + ledger.interruptedAttempts,
        duplicateLogs: 0,
      });
      // Every acknowledged execution is one of them, as the surviving API shows it.
      const listed = await clients[1]!.GET('/workflows/{workflowId}/executions', {
        params: { path: { workflowId }, query: { pageSize: 1000 } },
      });
      expect(listed.map((execution) => execution.id).sort()).toEqual(
        expect.arrayContaining([...ids].sort()),
      );
      expect(listed).toHaveLength(count);
      expect(new Set(listed.map((execution) => execution.status))).toEqual(new Set(['Completed']));
      expect((await ledgerOf(db, workflowId)).tasks).toBe(count * steps.length);

      // The survivors stop cleanly on SIGTERM, as `docker compose stop` and Kubernetes stop them.
      for (const survivor of [apis[1]!, workers[1]!]) {
        await survivor.stop();
        expect(await survivor.exited).toEqual({ code: 0, signal: null });
      }
      await temporal.check?.(db, workflowId);
    }, 150_000);
  });
}
