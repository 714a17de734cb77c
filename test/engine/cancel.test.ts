import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionWorkflowId } from '../../core/src/temporal/ids.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import { expectFailure } from '../api/api-error.js';
import {
  addWorkflow,
  definition,
  delay,
  eventually,
  execute,
  executionLogs,
  noop,
  run,
  statuses,
  taskLogs,
  tasksOf,
} from './engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

describe('cancel', () => {
  it('stops a running Flow/Delay within about two seconds and cancels what was pending', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([
        { name: 'Wait', ...delay(60_000) },
        { name: 'After', type: noop, dependencies: ['Wait'] },
      ]),
    );
    const executionId = await execute(trellis.admin, workflowId);
    const path = { workflowId, executionId };
    await eventually(async () =>
      expect((await statuses(trellis.admin, workflowId, executionId)).Wait).toBe('Running'),
    );
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
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([
        { name: 'Wait', ...delay(60_000) },
        { name: 'After', type: noop, dependencies: ['Wait'] },
      ]),
    );
    const executionId = await execute(trellis.admin, workflowId);
    await eventually(async () =>
      expect((await statuses(trellis.admin, workflowId, executionId)).Wait).toBe('Running'),
    );
    const connection = await Connection.connect({ address: trellis.config.Temporal.Address! });
    try {
      await new Client({ connection }).workflow
        .getHandle(executionWorkflowId(executionId))
        .cancel();
    } finally {
      await connection.close();
    }
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
