import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackAllowed, startTrellis, type Trellis } from '../support/harness.js';
import {
  definition,
  delay,
  noop,
  run,
  statuses,
  taskLogs,
  tasksOf,
} from '../support/engine-support.js';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';

let trellis: Trellis;
let server: ScriptedServer;

beforeAll(async () => {
  [trellis, server] = await Promise.all([
    startTrellis({ worker: true, config: loopbackAllowed }),
    startScriptedServer(),
  ]);
});
afterAll(async () => {
  await trellis?.stop();
  await server?.close();
});

let pathCounter = 0;

/** A Net/Http task against a fresh path of the scripted server answering `statuses` in turn. */
function call(statusSequence: number[], extra: Record<string, unknown> = {}) {
  const path = `/call-${++pathCounter}`;
  server.script(
    path,
    statusSequence.map((status) => ({ status, body: { status } })),
  );
  return {
    path,
    task: { type: { plugin: 'Net/Http' }, parameters: { url: `${server.url}${path}` }, ...extra },
  };
}

const gaps = (times: number[]) => times.slice(1).map((time, i) => time - times[i]!);

describe('error strategies', () => {
  it('Abort (the default): the task fails, its dependants are skipped, the run fails', async () => {
    const failing = call([500]);
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        { name: 'Fetch', ...failing.task },
        { name: 'Next', type: noop, dependencies: ['Fetch'] },
        { name: 'Last', type: noop, dependencies: ['Next'] },
        { name: 'Independent', type: noop },
      ]),
    );
    expect(execution.status).toBe('Failed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(tasks.Fetch!.status).toBe('Failed');
    expect(tasks.Fetch!.message).toMatch(/^Failed: GET .* returned HTTP 500/);
    expect(tasks.Next).toMatchObject({
      status: 'Skipped',
      message: "Skipped: dependency 'Fetch' failed.",
    });
    expect(tasks.Last).toMatchObject({
      status: 'Skipped',
      message: "Skipped: dependency 'Next' was skipped.",
    });
    expect(tasks.Independent!.status).toBe('Completed');
    expect(tasks.Next!.startTime).not.toBeNull();
    expect(tasks.Next!.endTime).not.toBeNull();
    expect(server.hits(failing.path)).toHaveLength(1);
  });

  it('Retry with Exponential backoff retries until the call succeeds', async () => {
    const flaky = call([500, 500, 200], {
      errorHandling: {
        strategy: 'Retry',
        retryPolicy: {
          maxRetries: 3,
          backoffStrategy: 'Exponential',
          initialDelayMilliseconds: 300,
          backoffCoefficient: 2,
        },
      },
    });
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([{ name: 'Flaky', ...flaky.task }]),
    );
    expect(execution.status).toBe('Completed');
    const hits = server.hits(flaky.path);
    expect(hits).toHaveLength(3);
    const [first, second] = gaps(hits);
    expect(first).toBeGreaterThanOrEqual(300);
    expect(second).toBeGreaterThanOrEqual(600);
    const task = (await tasksOf(trellis.admin, workflowId, executionId)).Flaky!;
    expect(task.status).toBe('Completed');
    const logs = await taskLogs(trellis.admin, workflowId, executionId, task.id);
    expect(logs).toEqual([
      'Started.',
      expect.stringMatching(
        /^Attempt 1 failed: .*HTTP 500.* Retrying in 300 ms \(retry 1 of 3\)\.$/,
      ),
      'Attempt 2 started.',
      expect.stringMatching(/^Attempt 2 failed: .* Retrying in 600 ms \(retry 2 of 3\)\.$/),
      'Attempt 3 started.',
      expect.stringMatching(/^Completed in \d+ ms\.$/),
    ]);
  });

  it('Retry with a workflow-wide Fixed policy fails once the retries are used up', async () => {
    const broken = call([503]);
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([{ name: 'Broken', ...broken.task }], {
        configuration: {
          errorHandling: {
            strategy: 'Retry',
            retryPolicy: { maxRetries: 2, backoffStrategy: 'Fixed', initialDelayMilliseconds: 100 },
          },
        },
      }),
    );
    expect(execution.status).toBe('Failed');
    expect(server.hits(broken.path)).toHaveLength(3);
    for (const gap of gaps(server.hits(broken.path))) expect(gap).toBeGreaterThanOrEqual(100);
    const task = (await tasksOf(trellis.admin, workflowId, executionId)).Broken!;
    expect(task.message).toMatch(/^Failed after 3 attempts: GET .* returned HTTP 503/);
  });

  it('Linear and Jitter backoff space the retries as their policy says', async () => {
    const linear = call([500, 500, 500, 200], {
      errorHandling: {
        strategy: 'Retry',
        retryPolicy: { maxRetries: 3, backoffStrategy: 'Linear', initialDelayMilliseconds: 150 },
      },
    });
    const jitter = call([500, 500, 200], {
      errorHandling: {
        strategy: 'Retry',
        retryPolicy: {
          maxRetries: 2,
          backoffStrategy: 'Jitter',
          initialDelayMilliseconds: 400,
          maxDelayMilliseconds: 400,
        },
      },
    });
    const { execution } = await run(
      trellis,
      definition([
        { name: 'Linear', ...linear.task },
        { name: 'Jitter', ...jitter.task },
      ]),
    );
    expect(execution.status).toBe('Completed');
    const [l1, l2, l3] = gaps(server.hits(linear.path));
    expect(l1).toBeGreaterThanOrEqual(150);
    expect(l2).toBeGreaterThanOrEqual(300);
    expect(l3).toBeGreaterThanOrEqual(450);
    // Capped at 400, then drawn from its upper half: between 200 and 400 ms (plus overhead).
    for (const gap of gaps(server.hits(jitter.path))) {
      expect(gap).toBeGreaterThanOrEqual(200);
      expect(gap).toBeLessThan(400 + 1500);
    }
  });

  it('does not retry an error the plugin marks non-retryable', async () => {
    const badRequest = call([400], {
      errorHandling: { strategy: 'Retry', retryPolicy: { maxRetries: 3 } },
    });
    const { execution } = await run(trellis, definition([{ name: 'Bad', ...badRequest.task }]));
    expect(execution.status).toBe('Failed');
    expect(server.hits(badRequest.path)).toHaveLength(1);
  });

  it('Skip marks the failed task Skipped and the run carries on', async () => {
    const failing = call([500], { errorHandling: { strategy: 'Skip' } });
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        { name: 'Optional', ...failing.task },
        { name: 'Next', type: noop, dependencies: ['Optional'] },
      ]),
    );
    expect(execution.status).toBe('Completed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(tasks.Optional!.status).toBe('Skipped');
    expect(tasks.Optional!.message).toMatch(/^Skipped after a failure \(error strategy Skip\): /);
    expect(tasks.Next!.status).toBe('Completed');
  });

  it('TriggerTask runs the named task when the task fails; the run completes', async () => {
    const failing = call([500], {
      errorHandling: { strategy: 'TriggerTask', triggerTask: 'Cleanup' },
    });
    const alert = call([200]);
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        { name: 'Work', ...failing.task },
        { name: 'Cleanup', ...alert.task },
        { name: 'Report', type: noop, dependencies: ['Work'] },
      ]),
    );
    expect(execution.status).toBe('Completed');
    expect(await statuses(trellis.admin, workflowId, executionId)).toEqual({
      Work: 'Failed',
      Cleanup: 'Completed',
      Report: 'Skipped',
    });
    expect(server.hits(alert.path)).toHaveLength(1);
  });
});

describe('runOnFailureOf', () => {
  it('runs the handler when its source fails, and skips it when nothing failed', async () => {
    const failing = call([500]);
    const handler = call([200]);
    const failed = await run(
      trellis,
      definition([
        { name: 'Store', ...failing.task },
        { name: 'Alert', ...handler.task, runOnFailureOf: ['Store'] },
      ]),
    );
    expect(failed.execution.status).toBe('Completed');
    expect(await statuses(trellis.admin, failed.workflowId, failed.executionId)).toEqual({
      Store: 'Failed',
      Alert: 'Completed',
    });

    const fine = await run(
      trellis,
      definition([
        { name: 'Store', type: noop },
        { name: 'Alert', type: noop, runOnFailureOf: ['Store'] },
      ]),
    );
    expect(fine.execution.status).toBe('Completed');
    const tasks = await tasksOf(trellis.admin, fine.workflowId, fine.executionId);
    expect(tasks.Alert).toMatchObject({
      status: 'Skipped',
      message: "Skipped: none of 'Store' failed.",
    });
  });
});

describe('timeouts', () => {
  it('a task timeout fails the attempt, and a retry gets a fresh attempt', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        {
          name: 'Slow',
          ...delay(10_000),
          timeoutMilliseconds: 300,
          errorHandling: {
            strategy: 'Retry',
            retryPolicy: { maxRetries: 1, initialDelayMilliseconds: 100 },
          },
        },
      ]),
      20_000,
    );
    expect(execution.status).toBe('Failed');
    const task = (await tasksOf(trellis.admin, workflowId, executionId)).Slow!;
    expect(task.message).toBe('Failed after 2 attempts: Timed out after 300 ms.');
    expect(Date.parse(task.endTime!) - Date.parse(task.startTime!)).toBeLessThan(5_000);
    const logs = await taskLogs(trellis.admin, workflowId, executionId, task.id);
    expect(logs[1]).toBe(
      'Attempt 1 failed: Timed out after 300 ms. Retrying in 100 ms (retry 1 of 1).',
    );
  });

  it('the workflow timeout fails the run and cancels what is running and pending', async () => {
    const started = Date.now();
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition(
        [
          { name: 'Long', ...delay(30_000) },
          { name: 'After', type: noop, dependencies: ['Long'] },
        ],
        { configuration: { timeoutMilliseconds: 800 } },
      ),
      20_000,
    );
    expect(execution.status).toBe('Failed');
    expect(Date.now() - started).toBeLessThan(10_000);
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(tasks.Long).toMatchObject({ status: 'Canceled' });
    expect(tasks.After).toMatchObject({
      status: 'Canceled',
      message: 'Canceled: the execution timed out.',
    });
  });
});
