/**
 * Tasks whose plugin is quick (`PluginManifest.quick`) run their attempts as Temporal local
 * activities: the history shows a marker per attempt instead of an activity task, and nothing
 * a user sees changes (statuses, logs, retries with backoff, timeouts, cancel).
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_ATTEMPTS_PER_TASK } from '../../workflows-worker/src/workflows/local-attempt-budget.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  attemptsInHistory,
  definition,
  delay,
  executionLogs,
  expectBefore,
  localActivitiesInHistory,
  localAttemptsPerWorkflowTask,
  noop,
  run,
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

let trellis: Trellis;
let registry: Awaited<ReturnType<typeof writeQuickPluginRegistry>>;

beforeAll(async () => {
  registry = await writeQuickPluginRegistry();
  trellis = await startTrellis({ worker: true, config: { Plugins: { Registry: registry.index } } });
  await installQuickWait(trellis.admin);
});
afterAll(async () => {
  await trellis?.stop();
  await registry?.remove();
});

const completed = expect.stringMatching(/^Completed in \d+ ms\.$/);

/** The run's local activities in its Temporal history, and its own log entries. */
async function bookkeepingOf(workflowId: string, executionId: string) {
  return {
    localActivities: await localActivitiesInHistory(trellis, executionId),
    logs: await executionLogs(trellis.admin, workflowId, executionId),
  };
}

const attempts = (count: number) => Array.from({ length: count }, () => 'runTaskAttempt');

const retry = (maxRetries: number, initialDelayMilliseconds: number) => ({
  errorHandling: {
    strategy: 'Retry',
    retryPolicy: { maxRetries, backoffStrategy: 'Fixed', initialDelayMilliseconds },
  },
});

describe('quick tasks', () => {
  it('a chain of quick built-ins runs as local activities, with the same rows and logs', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        { name: 'Start', type: noop, parameters: { values: [1, 2, 3] } },
        {
          name: 'Sum',
          type: { plugin: 'Data/Json' },
          dependencies: ['Start'],
          parameters: { expression: '$sum(values)', input: "$[Outputs('Start')]" },
        },
        {
          name: 'Report',
          type: { plugin: 'Flow/Log' },
          dependencies: ['Sum'],
          parameters: { message: "The sum is $[Outputs('Sum').result]." },
        },
      ]),
    );
    expect(execution.status).toBe('Completed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    for (const task of Object.values(tasks)) {
      expect(task).toMatchObject({ status: 'Completed', message: completed });
      expect(task.startTime).not.toBeNull();
      expect(task.endTime).not.toBeNull();
    }
    expectBefore(tasks.Start!, tasks.Sum!);
    expectBefore(tasks.Sum!, tasks.Report!);
    expect(await taskLogs(trellis.admin, workflowId, executionId, tasks.Start!.id)).toEqual([
      'Started.',
      completed,
    ]);
    expect(await taskLogs(trellis.admin, workflowId, executionId, tasks.Report!.id)).toEqual([
      'Started.',
      'The sum is 6.',
      completed,
    ]);
    expect(await attemptsInHistory(trellis, executionId)).toEqual({
      regular: [],
      local: 3,
      timers: 0,
    });
    // The API prepared the run, whose first attempt opened its log: no prepare activity. The
    // last attempt recorded the run's end with its task: no bookkeeping activity after it.
    expect(await bookkeepingOf(workflowId, executionId)).toEqual({
      localActivities: attempts(3),
      logs: [
        'Execution started (3 tasks).',
        'Execution completed: All tasks finished: 3 completed.',
      ],
    });
  });

  it('a run whose last task fails records its end itself, as a run with more to do would', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        { name: 'Start', type: noop },
        {
          name: 'Broken',
          type: { plugin: 'Data/Json' },
          dependencies: ['Start'],
          parameters: { expression: '$error("no")', input: {} },
        },
      ]),
    );
    expect(execution).toMatchObject({ status: 'Failed', message: "Task 'Broken' failed." });
    expect(await bookkeepingOf(workflowId, executionId)).toEqual({
      localActivities: [...attempts(2), 'recordProgress'],
      logs: ['Execution started (2 tasks).', "Execution failed: Task 'Broken' failed."],
    });
  });

  it("a run the API prepared opens its log before any task's entry, whichever task writes first", async () => {
    // Two first tasks: the quick one writes (its outcome) long before the slower one's
    // Running mark; both carry the opening entry, written once, first.
    const { executionId, execution } = await run(
      trellis,
      definition([
        { name: 'Slow', ...delay(400) },
        { name: 'Quick', type: noop },
      ]),
    );
    expect(execution.status).toBe('Completed');
    const entries = await trellis.db
      .selectFrom('logEntry')
      .select(['message', 'taskExecutionId'])
      .where('executionId', '=', executionId)
      .orderBy('seq')
      .execute();
    expect(entries[0]).toEqual({ message: 'Execution started (2 tasks).', taskExecutionId: null });
    expect(entries.filter(({ message }) => message.startsWith('Execution started'))).toHaveLength(
      1,
    );
    expect(entries).toHaveLength(6); // the opening, two per task, the end
    // The last task's outcome and the run's end land in one statement, the end's entry last.
    expect(entries.at(-2)).toMatchObject({
      message: completed,
      taskExecutionId: expect.any(String),
    });
    expect(entries.at(-1)).toEqual({
      message: 'Execution completed: All tasks finished: 2 completed.',
      taskExecutionId: null,
    });
  });

  it('a run whose plugin row does not say whether it is quick is prepared by its worker, as before', async () => {
    // As a plugin installed before rows kept it. The API's view of the plugins follows the
    // table's change notification, and is never older than two seconds.
    const set = (quick: boolean | null) =>
      trellis.db.updateTable('plugin').set({ quick }).where('type', '=', 'Data/Json').execute();
    await set(null);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    try {
      const { workflowId, executionId, execution } = await run(
        trellis,
        definition([
          { name: 'Start', type: noop },
          {
            name: 'Sum',
            type: { plugin: 'Data/Json' },
            dependencies: ['Start'],
            parameters: { expression: '1 + 1', input: {} },
          },
        ]),
      );
      expect(execution.status).toBe('Completed');
      // The worker read the package: both attempts are still local.
      expect(await bookkeepingOf(workflowId, executionId)).toEqual({
        localActivities: ['prepareExecution', ...attempts(2)],
        logs: [
          'Execution started (2 tasks).',
          'Execution completed: All tasks finished: 2 completed.',
        ],
      });
    } finally {
      await set(true);
    }
  });

  it('ends a workflow task after a bounded number of quick attempts, so no completion grows too large', async () => {
    // Temporal terminates a run whose workflow task completion passes 4 MB (GrpcMessageTooLarge);
    // every quick attempt of a workflow task adds a marker to it.
    const count = 2 * LOCAL_ATTEMPTS_PER_TASK + 20;
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition(
        Array.from({ length: count }, (_, index) => ({ name: `T${index}`, type: noop })),
        { configuration: { degreeOfParallelism: 100 } },
      ),
    );
    expect(execution.status).toBe('Completed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(Object.values(tasks).filter((task) => task.status === 'Completed')).toHaveLength(count);
    const history = await attemptsInHistory(trellis, executionId);
    expect(history.local).toBe(count);
    expect(history.timers).toBeGreaterThanOrEqual(2);
    const perWorkflowTask = await localAttemptsPerWorkflowTask(trellis, executionId);
    expect(Math.max(...perWorkflowTask)).toBeLessThanOrEqual(LOCAL_ATTEMPTS_PER_TASK);
  });

  it('a plugin that is not quick still runs as an activity task beside quick ones', async () => {
    const { executionId, execution } = await run(
      trellis,
      definition([
        { name: 'Before', type: noop },
        { name: 'Wait', ...delay(50), dependencies: ['Before'] },
        { name: 'After', type: noop, dependencies: ['Wait'] },
      ]),
    );
    expect(execution.status).toBe('Completed');
    expect(await attemptsInHistory(trellis, executionId)).toEqual({
      regular: ['Wait'],
      local: 2,
      timers: 0,
    });
  });

  it('retries a failing quick task by the definition, waiting on workflow timers', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([{ name: 'Flaky', ...quickWaitTask({ failUntilAttempt: 2 }), ...retry(2, 300) }]),
    );
    expect(execution.status).toBe('Completed');
    const flaky = (await tasksOf(trellis.admin, workflowId, executionId)).Flaky!;
    expect(flaky).toMatchObject({ status: 'Completed', message: completed });
    expect(await taskLogs(trellis.admin, workflowId, executionId, flaky.id)).toEqual([
      'Started.',
      'Attempt 1 failed: attempt 1 fails on purpose. Retrying in 300 ms (retry 1 of 2).',
      'Attempt 2 started.',
      'Attempt 2 failed: attempt 2 fails on purpose. Retrying in 300 ms (retry 2 of 2).',
      'Attempt 3 started.',
      completed,
    ]);
    const row = await trellis.db
      .selectFrom('taskExecution')
      .select('attempts')
      .where('id', '=', flaky.id)
      .executeTakeFirstOrThrow();
    expect(row.attempts).toBe(3);
    // Each attempt is a local activity of its own; the backoffs are the workflow's timers.
    expect(await attemptsInHistory(trellis, executionId)).toEqual({
      regular: [],
      local: 3,
      timers: 2,
    });
  });

  it('fails the run once a quick task has used up its retries, skipping its dependants', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        { name: 'Broken', ...quickWaitTask({ failUntilAttempt: 99 }), ...retry(1, 100) },
        { name: 'Next', type: noop, dependencies: ['Broken'] },
      ]),
    );
    expect(execution.status).toBe('Failed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(tasks.Broken).toMatchObject({
      status: 'Failed',
      message: 'Failed after 2 attempts: attempt 2 fails on purpose.',
    });
    expect(tasks.Next).toMatchObject({
      status: 'Skipped',
      message: "Skipped: dependency 'Broken' failed.",
    });
    expect(await attemptsInHistory(trellis, executionId)).toMatchObject({ regular: [], local: 2 });
  });

  it('fails a quick task at once when its plugin says retrying cannot help', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        {
          name: 'Select',
          type: { plugin: 'Data/Json' },
          parameters: { expression: 'orders[', input: {} },
          ...retry(3, 100),
        },
      ]),
    );
    expect(execution.status).toBe('Failed');
    const select = (await tasksOf(trellis.admin, workflowId, executionId)).Select!;
    expect(select.status).toBe('Failed');
    expect(select.message).toMatch(/^Failed: expression is not valid JSONata: /);
    expect(await attemptsInHistory(trellis, executionId)).toMatchObject({ regular: [], local: 1 });
  });

  it('enforces the task timeout inside a quick attempt, as a retryable failure', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        {
          name: 'Slow',
          ...quickWaitTask({ milliseconds: 30_000 }),
          timeoutMilliseconds: 200,
          ...retry(1, 100),
        },
      ]),
    );
    expect(execution.status).toBe('Failed');
    const slow = (await tasksOf(trellis.admin, workflowId, executionId)).Slow!;
    expect(slow).toMatchObject({
      status: 'Failed',
      message: 'Failed after 2 attempts: Timed out after 200 ms.',
    });
    expect(await taskLogs(trellis.admin, workflowId, executionId, slow.id)).toEqual([
      'Started.',
      'Attempt 1 failed: Timed out after 200 ms. Retrying in 100 ms (retry 1 of 1).',
      'Attempt 2 started.',
      'Failed after 2 attempts: Timed out after 200 ms.',
    ]);
  });

  it('a cancel aborts a running quick plugin and records the task Canceled', async () => {
    // Under the storage root: the one folder a third-party plugin's sandbox lets it write to.
    const storageRoot = trellis.config.Plugins.StorageRoot;
    await mkdir(storageRoot, { recursive: true });
    const scratch = await mkdtemp(path.join(storageRoot, 'quick-cancel-'));
    try {
      const abortedMarker = path.join(scratch, 'aborted');
      const { workflowId, executionId } = await start(
        trellis.admin,
        definition([
          { name: 'Wait', ...quickWaitTask({ milliseconds: 60_000, abortedMarker }) },
          { name: 'After', type: noop, dependencies: ['Wait'] },
        ]),
      );
      await untilStatuses(trellis.admin, workflowId, executionId, { Wait: 'Running' });
      await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
        params: { path: { workflowId, executionId } },
      });
      // Not within a second or two as for a regular task: the cancel signal reaches the workflow
      // only when the workflow task the local activity holds open ends (the worker ends it after
      // 80% of the 10 s workflow task timeout). A plugin that is really quick is done by then.
      const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
        timeoutMs: 20_000,
      });
      expect(finished.status).toBe('Canceled');
      expect(await readFile(abortedMarker, 'utf8')).toBe('aborted');

      const tasks = await tasksOf(trellis.admin, workflowId, executionId);
      expect(tasks.Wait).toMatchObject({ status: 'Canceled', message: 'Canceled while running.' });
      expect(tasks.Wait!.endTime).not.toBeNull();
      expect(tasks.After).toMatchObject({
        status: 'Canceled',
        message: 'Canceled: the execution was canceled.',
      });
      const logs = await taskLogs(trellis.admin, workflowId, executionId, tasks.Wait!.id);
      expect(logs.at(-1)).toBe('Canceled while running.');
      expect(await attemptsInHistory(trellis, executionId)).toMatchObject({ regular: [] });
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
