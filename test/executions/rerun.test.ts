import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFailure } from '../api/api-error.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  addWorkflow,
  definition,
  delay,
  noop,
  taskLogs,
  tasksOf,
  untilStatuses,
  type Definition,
} from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

/** Prepare → Compute (its JSONata expression is an input) → Report, which reads both. */
const pipeline = (): Definition =>
  definition(
    [
      { name: 'Prepare', type: noop, parameters: { values: [1, 2, 3] } },
      {
        name: 'Compute',
        type: { plugin: 'Data/Json' },
        dependencies: ['Prepare'],
        parameters: { expression: "$[Inputs('expression')]", input: "$[Outputs('Prepare')]" },
      },
      {
        name: 'Report',
        type: noop,
        dependencies: ['Compute'],
        parameters: {
          values: "$[Outputs('Prepare').values]",
          result: "$[Outputs('Compute').result]",
        },
      },
    ],
    {
      inputs: { expression: { type: 'string', required: true } },
      outputs: { report: "Outputs('Report')" },
    },
  );

async function execute(workflowId: string, inputs: Record<string, unknown>) {
  const { executionId } = await trellis.admin.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId }, query: { waitSeconds: 30 } },
    body: { workflowId, inputs },
  });
  return executionId;
}

function rerun(
  workflowId: string,
  executionId: string,
  body?: { fromTask?: string; inputs?: Record<string, unknown> },
) {
  return trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/rerun', {
    params: { path: { workflowId, executionId } },
    ...(body ? { body } : {}),
  });
}

describe('rerun', () => {
  it('reruns a failed run from its failed task, reusing what completed before it', async () => {
    const workflowId = await addWorkflow(trellis.admin, pipeline());
    const failedId = await execute(workflowId, { expression: 'values[' });
    expect((await trellis.admin.waitForExecution(workflowId, failedId)).status).toBe('Failed');
    const before = await tasksOf(trellis.admin, workflowId, failedId);

    const started = await rerun(workflowId, failedId, {
      fromTask: 'Compute',
      inputs: { expression: '$sum(values)' },
    });
    const execution = await trellis.admin.waitForExecution(workflowId, started.executionId);
    expect(execution).toMatchObject({
      status: 'Completed',
      rerunOf: failedId,
      inputs: { expression: '$sum(values)' },
      outputs: { report: { values: [1, 2, 3], result: 6 } },
    });

    const tasks = await tasksOf(trellis.admin, workflowId, started.executionId);
    expect(tasks.Prepare).toMatchObject({
      status: 'Completed',
      message: `Completed: output reused from execution ${failedId}; not run again.`,
    });
    expect(tasks.Compute!.status).toBe('Completed');
    expect(tasks.Report!.status).toBe('Completed');
    // Prepare did not run: its only log line says it was reused.
    expect(
      await taskLogs(trellis.admin, workflowId, started.executionId, tasks.Prepare!.id),
    ).toEqual([`Output reused from execution ${failedId}; not run again.`]);
    expect(
      await taskLogs(trellis.admin, workflowId, started.executionId, tasks.Compute!.id),
    ).toContain('Started.');
    // The original is untouched.
    expect(await tasksOf(trellis.admin, workflowId, failedId)).toEqual(before);
  });

  it("without fromTask reruns only what did not complete, with the original's inputs", async () => {
    const workflowId = await addWorkflow(trellis.admin, pipeline());
    const firstId = await execute(workflowId, { expression: '$count(values)' });
    const started = await rerun(workflowId, firstId);
    const execution = await trellis.admin.waitForExecution(workflowId, started.executionId);
    expect(execution).toMatchObject({
      status: 'Completed',
      inputs: { expression: '$count(values)' },
      outputs: { report: { values: [1, 2, 3], result: 3 } },
    });
    const tasks = await tasksOf(trellis.admin, workflowId, started.executionId);
    for (const task of Object.values(tasks)) expect(task.message).toMatch(/output reused/);
  });

  it('refuses a run that is still going (409), an unknown task (400), bad inputs (400)', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Wait', ...delay(60_000) }]),
    );
    const { executionId } = await trellis.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: { workflowId },
    });
    await untilStatuses(trellis.admin, workflowId, executionId, { Wait: 'Running' });
    const running = await expectFailure(rerun(workflowId, executionId), 409);
    expect(running.codes).toEqual(['execution.still_running']);
    await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path: { workflowId, executionId } },
    });
    await trellis.admin.waitForExecution(workflowId, executionId);
    await expectFailure(
      rerun(workflowId, executionId, { fromTask: 'Nope' }),
      400,
      "body.fromTask: names no task of the execution's definition (Nope)",
    );
    await expectFailure(rerun(workflowId, executionId, { inputs: { x: 1 } }), 400, /body.inputs.x/);
    await expectFailure(rerun(workflowId, randomUUID()), 404);
  });
});
