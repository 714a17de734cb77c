/**
 * Durability: a worker process stopped or killed with SIGKILL in the middle of a run loses
 * nothing. Another worker process picks the run up; every task is recorded once, and an attempt
 * the stop cut short is recorded as an interrupted attempt of its own, its re-run as the next.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackAllowed, startTrellis, type Trellis } from '../support/harness.js';
import {
  definition,
  delay,
  executionLogs,
  noop,
  start,
  tasksOf,
  untilStatuses,
} from '../support/engine-support.js';
import {
  installQuickWait,
  quickWaitTask,
  writeQuickPluginRegistry,
} from '../support/quick-plugin.js';
import { workerProcesses, type WorkerProcesses } from '../support/worker-processes.js';

let trellis: Trellis;
let registry: Awaited<ReturnType<typeof writeQuickPluginRegistry>>;
let workers: WorkerProcesses;

beforeAll(async () => {
  registry = await writeQuickPluginRegistry();
  // Loopback allowed, where the receiver of a Net/Http task listens.
  trellis = await startTrellis({
    config: { Plugins: { Registry: registry.index, Network: loopbackAllowed.Plugins.Network } },
  });
  await installQuickWait(trellis.admin);
  workers = await workerProcesses(trellis);
});
afterAll(async () => {
  await workers?.stop();
  await trellis?.stop();
  await registry?.remove();
});

/**
 * Checks the run completed with each of its tasks recorded exactly once, in one attempt, but
 * `interrupted`: recorded as an interrupted attempt, then the attempt after it that completed.
 */
async function expectRecordedOnce(
  workflowId: string,
  executionId: string,
  count: number,
  interrupted?: { task: string; stop: 'graceful' | 'crash' },
) {
  const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
    timeoutMs: 90_000,
  });
  expect(finished.status).toBe('Completed');
  const tasks = await trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}/tasks', {
    params: { path: { workflowId, executionId } },
  });
  expect(tasks).toHaveLength(count);
  for (const task of tasks) {
    expect(task.status).toBe('Completed');
    const entries = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}/logs',
      { params: { path: { workflowId, executionId, taskExecutionId: task.id } } },
    );
    const logs = entries.map(({ level, message }) => ({ level, message }));
    const completed = { level: 'Info', message: expect.stringMatching(/^Completed in \d+ ms\.$/) };
    if (task.name !== interrupted?.task) {
      // One attempt each, logged once: a re-run of a quick attempt left no trace to find.
      expect(logs, task.name).toEqual([{ level: 'Info', message: 'Started.' }, completed]);
      expect(task).toMatchObject({ attempts: 1, interruptedAttempts: 0 });
      continue;
    }
    // The interrupted attempt's own entries (a graceful stop writes them before it goes; a
    // crash loses them), its interruption, then the next attempt's, which completes.
    const again = 'It runs again as attempt 2; an interruption does not use up a retry.';
    const why =
      interrupted.stop === 'graceful'
        ? ' after \\d+\\.\\d s: the worker is shutting down\\.'
        : ': its worker stopped before it ended \\(found \\d+\\.\\d s after it started\\)\\.';
    expect(logs, task.name).toEqual([
      ...(interrupted.stop === 'graceful' ? [{ level: 'Info', message: 'Started.' }] : []),
      {
        level: 'Warning',
        message: expect.stringMatching(new RegExp(`^Attempt 1 interrupted${why} ${again}$`)),
      },
      { level: 'Info', message: 'Attempt 2 started.' },
      completed,
    ]);
    expect(task).toMatchObject({ attempts: 2, interruptedAttempts: 1 });
  }
  // The workflow's own count: the interruption used up no retry.
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
  it('a worker stopped gracefully mid-task writes the attempt as interrupted; the next one completes it', async () => {
    const first = await workers.spawnOnly();
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([
        // Longer than the worker's shutdown grace time: the attempt is interrupted, not awaited.
        { name: 'Long', ...delay(9000) },
        { name: 'Tail', type: noop, dependencies: ['Long'] },
      ]),
    );
    await untilStatuses(trellis.admin, workflowId, executionId, { Long: 'Running' });
    const second = workers.spawn();
    first.kill('SIGTERM');
    await second;
    await expectRecordedOnce(workflowId, executionId, 2, { task: 'Long', stop: 'graceful' });
  }, 180_000);

  it('a worker killed mid-run is replaced; the attempt it cut short is recorded interrupted', async () => {
    const first = await workers.spawnOnly();
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

    await workers.spawn();
    await expectRecordedOnce(workflowId, executionId, 5, { task: 'Long', stop: 'crash' });
  }, 180_000);

  // A quick plugin's attempt is a local activity: no heartbeat, no activity task to time out.
  // The run's workflow task, which the attempt holds open, times out instead, and the worker
  // that resumes the run runs the same attempt again: its Running mark finds the one before.
  it('a worker killed during a quick task is replaced and the attempt runs again as the next', async () => {
    const first = await workers.spawnOnly();
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

    await workers.spawn();
    await expectRecordedOnce(workflowId, executionId, 3, { task: 'Quick', stop: 'crash' });
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
      await workers.spawn();
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/charge`;
      const { workflowId, executionId } = await start(
        trellis.admin,
        definition([
          { name: 'Charge', type: { plugin: 'Net/Http' }, parameters: { url, method: 'POST' } },
        ]),
      );
      await firstArrived;
      // Workers of earlier tests poll too: whichever holds the request dies.
      await workers.spawnOnly();
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
    const first = await workers.spawnOnly();
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
    const second = workers.spawn();
    first.kill('SIGTERM');
    await second;
    await expectRecordedOnce(workflowId, executionId, 2);
  }, 180_000);
});
