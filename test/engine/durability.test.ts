/**
 * Durability: a worker process killed with SIGKILL in the middle of a run loses
 * nothing. Another worker process picks the run up; every task is recorded exactly once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackAllowed, startTrellis, type Trellis } from '../support/harness.js';
import {
  definition,
  delay,
  executionLogs,
  noop,
  start,
  taskLogs,
  tasksOf,
  untilStatuses,
} from '../support/engine-support.js';
import {
  installQuickWait,
  quickWaitTask,
  writeQuickPluginRegistry,
} from '../support/quick-plugin.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let trellis: Trellis;
let directory: string;
let configFile: string;
let registry: Awaited<ReturnType<typeof writeQuickPluginRegistry>>;
const workers = new Set<ChildProcess>();

/** Starts `trellis --role worker` as its own process; resolves once it polls. */
async function spawnWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/trellis.ts', '--role', 'worker'], {
    cwd: root,
    env: { ...process.env, TRELLIS_CONFIG: configFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  workers.add(child);
  child.once('exit', () => workers.delete(child));
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start:\n${output}`)), 60_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      output += `${line}\n`;
      if (line.includes('worker polling')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code}:\n${output}`));
    });
  });
  return child;
}

beforeAll(async () => {
  registry = await writeQuickPluginRegistry();
  // Loopback allowed, where the receiver of a Net/Http task listens.
  trellis = await startTrellis({
    config: { Plugins: { Registry: registry.index, Network: loopbackAllowed.Plugins.Network } },
  });
  await installQuickWait(trellis.admin);
  directory = await mkdtemp(path.join(tmpdir(), 'trellis-durability-'));
  configFile = path.join(directory, 'trellis.config.json');
  // The same database, Temporal and task queue as the API; logs on stdout for the readiness line.
  await writeFile(
    configFile,
    JSON.stringify({
      ...trellis.config,
      Logging: { Level: 'info' },
      Server: { ...trellis.config.Server, Port: 0 },
      // Each worker's probes on a port of its own (two run at once).
      Metrics: { ...trellis.config.Metrics, WorkerPort: 0 },
    }),
  );
});
afterAll(async () => {
  for (const child of workers) child.kill('SIGKILL');
  await trellis?.stop();
  await registry?.remove();
  if (directory) await rm(directory, { recursive: true, force: true });
});

/** Checks the run completed with each of its tasks recorded exactly once, in one attempt. */
async function expectRecordedOnce(workflowId: string, executionId: string, count: number) {
  const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
    timeoutMs: 90_000,
  });
  expect(finished.status).toBe('Completed');
  const tasks = await tasksOf(trellis.admin, workflowId, executionId);
  expect(Object.keys(tasks)).toHaveLength(count);
  for (const task of Object.values(tasks)) {
    expect(task.status).toBe('Completed');
    // One attempt each, logged once: a re-run after the worker went away is the same attempt.
    expect(await taskLogs(trellis.admin, workflowId, executionId, task.id)).toEqual([
      'Started.',
      expect.stringMatching(/^Completed in \d+ ms\.$/),
    ]);
  }
  const rows = await trellis.db
    .selectFrom('taskExecution')
    .select(['name', 'attempts'])
    .where('executionId', '=', executionId)
    .execute();
  expect(rows.every((row) => row.attempts === 1)).toBe(true);
  const logs = await executionLogs(trellis.admin, workflowId, executionId);
  expect(logs.filter((line) => line.startsWith('Execution started'))).toHaveLength(1);
  expect(logs.filter((line) => line.startsWith('Execution completed'))).toHaveLength(1);
}

describe('durability', () => {
  it('a worker stopped gracefully mid-task hands the attempt over without counting a failure', async () => {
    const first = await spawnWorker();
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([
        // Longer than the worker's shutdown grace time: the attempt is interrupted, not awaited.
        { name: 'Long', ...delay(9000) },
        { name: 'Tail', type: noop, dependencies: ['Long'] },
      ]),
    );
    await untilStatuses(trellis.admin, workflowId, executionId, { Long: 'Running' });
    const second = spawnWorker();
    first.kill('SIGTERM');
    await second;
    await expectRecordedOnce(workflowId, executionId, 2);
  }, 180_000);

  it('a worker killed mid-run is replaced and the run completes with every task recorded once', async () => {
    const first = await spawnWorker();
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([
        { name: 'Start', type: noop },
        { name: 'Long', ...delay(4000), dependencies: ['Start'] },
        { name: 'Side-1', ...delay(200), dependencies: ['Start'] },
        { name: 'Side-2', ...delay(200), dependencies: ['Start'] },
        { name: 'Tail', type: noop, dependencies: ['Long', 'Side-1', 'Side-2'] },
      ]),
    );
    await untilStatuses(trellis.admin, workflowId, executionId, {
      Long: 'Running',
      'Side-1': 'Completed',
      'Side-2': 'Completed',
    });
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));

    await spawnWorker();
    await expectRecordedOnce(workflowId, executionId, 5);
  }, 180_000);

  // A quick plugin's attempt is a local activity: no heartbeat, no activity task to time out.
  // The run's workflow task, which the attempt holds open, times out instead, and the worker
  // that resumes the run runs the same attempt again.
  it('a worker killed during a quick task is replaced and the attempt runs again, recorded once', async () => {
    const first = await spawnWorker();
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([
        { name: 'Start', type: noop },
        { name: 'Quick', ...quickWaitTask({ milliseconds: 4000 }), dependencies: ['Start'] },
        { name: 'Tail', type: noop, dependencies: ['Quick'] },
      ]),
    );
    await untilStatuses(trellis.admin, workflowId, executionId, { Quick: 'Running' });
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));

    await spawnWorker();
    await expectRecordedOnce(workflowId, executionId, 3);
  }, 180_000);

  it('a worker killed mid-request sends it again with the same Idempotency-Key (issue 27, item 15)', async () => {
    // The first request is held unanswered until the worker dies; the next is answered.
    const keys: (string | undefined)[] = [];
    let arrived: () => void = () => {};
    const firstArrived = new Promise<void>((resolve) => (arrived = resolve));
    const receiver = createServer((request, response) => {
      keys.push(request.headers['idempotency-key'] as string | undefined);
      if (keys.length === 1) arrived();
      else response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      await spawnWorker();
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/charge`;
      const { workflowId, executionId } = await start(
        trellis.admin,
        definition([
          { name: 'Charge', type: { plugin: 'Net/Http' }, parameters: { url, method: 'POST' } },
        ]),
      );
      await firstArrived;
      // Workers of earlier tests poll too: whichever holds the request dies.
      await Promise.all(
        [...workers].map((worker) => {
          const exited = new Promise((resolve) => worker.once('exit', resolve));
          worker.kill('SIGKILL');
          return exited;
        }),
      );

      await spawnWorker();
      const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
        timeoutMs: 90_000,
      });
      const { Charge } = await tasksOf(trellis.admin, workflowId, executionId);
      expect([finished.status, keys.length], Charge!.message).toEqual(['Completed', 2]);
      // Sent twice (delivery is at least once), recorded once, under one key.
      expect(keys).toEqual([`${executionId}:${Charge!.id}:1`, `${executionId}:${Charge!.id}:1`]);
    } finally {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  }, 180_000);

  it('a worker stopped gracefully during a quick task loses nothing, recording it once', async () => {
    const first = await spawnWorker();
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([
        // Longer than the worker's shutdown grace time. The stopping worker lets a local
        // activity finish (the SDK cancels only regular ones at the grace time); had it been
        // cut short, the next worker would run the same attempt again.
        { name: 'Quick', ...quickWaitTask({ milliseconds: 9000 }) },
        { name: 'Tail', type: noop, dependencies: ['Quick'] },
      ]),
    );
    await untilStatuses(trellis.admin, workflowId, executionId, { Quick: 'Running' });
    const second = spawnWorker();
    first.kill('SIGTERM');
    await second;
    await expectRecordedOnce(workflowId, executionId, 2);
  }, 180_000);
});
