import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionWorkflowId } from '#protocol/ids.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import { expectFailure } from '../api/api-error.js';
import {
  addWorkflow,
  definition,
  delay,
  executionLogs,
  noop,
  run,
  start,
  statuses,
  taskLogs,
  tasksOf,
  untilStatuses,
  withTemporalClient,
} from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

/** A long wait and a task after it: a run that is still busy when the test cancels it. */
const longWait = () =>
  definition([
    { name: 'Wait', ...delay(60_000) },
    { name: 'After', type: noop, dependencies: ['Wait'] },
  ]);

describe('cancel', () => {
  it('stops a running Flow/Delay within about two seconds and cancels what was pending', async () => {
    const { workflowId, executionId } = await start(trellis.admin, longWait());
    const path = { workflowId, executionId };
    await untilStatuses(trellis.admin, workflowId, executionId, { Wait: 'Running' });
    // Let the plugin settle into its wait (and the activity heartbeat) before canceling.
    await new Promise((resolve) => setTimeout(resolve, 1200));

    const requested = Date.now();
    await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path },
    });
    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 10_000,
      intervalMs: 50,
    });
    const elapsed = Date.now() - requested;
    expect(finished.status).toBe('Canceled');
    expect(finished.executionEnd).not.toBeNull();
    expect(elapsed).toBeLessThan(3_000);

    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(tasks.Wait).toMatchObject({ status: 'Canceled', message: 'Canceled while running.' });
    expect(tasks.After).toMatchObject({
      status: 'Canceled',
      message: 'Canceled: the execution was canceled.',
    });
    expect(await taskLogs(trellis.admin, workflowId, executionId, tasks.Wait!.id)).toEqual([
      'Started.',
      'Canceled while running.',
    ]);
    const logs = await executionLogs(trellis.admin, workflowId, executionId);
    expect(logs).toContain('Cancel requested by admin.');
    expect(logs.at(-1)).toBe('Execution canceled: Canceled by admin.');

    await expectFailure(
      trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
        params: { path },
      }),
      409,
      /is Canceled/,
    );
  });

  it('treats a cancel from Temporal itself (e.g. the Temporal UI) like the API cancel', async () => {
    const { workflowId, executionId } = await start(trellis.admin, longWait());
    await untilStatuses(trellis.admin, workflowId, executionId, { Wait: 'Running' });
    await withTemporalClient(trellis, (client) =>
      client.workflow.getHandle(executionWorkflowId(executionId)).cancel(),
    );
    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 10_000,
    });
    expect(finished.status).toBe('Canceled');
    expect(await statuses(trellis.admin, workflowId, executionId)).toEqual({
      Wait: 'Canceled',
      After: 'Canceled',
    });
  });

  it('refuses to cancel a finished execution and 404s another workflow’s execution', async () => {
    const done = await run(trellis, definition([{ name: 'A', type: noop }]));
    await expectFailure(
      trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
        params: { path: { workflowId: done.workflowId, executionId: done.executionId } },
      }),
      409,
    );
    const other = await addWorkflow(trellis.admin, definition([{ name: 'B', type: noop }]));
    await expectFailure(
      trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
        params: { path: { workflowId: other, executionId: done.executionId } },
      }),
      404,
    );
  });
});
