import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionWorkflowId } from '../../core/src/temporal/ids.js';
import { stateQuery } from '../../core/src/temporal/messages.js';
import { basicAs, startTrellis, type Trellis } from '../support/harness.js';
import { expectFailure } from '../api/api-error.js';
import {
  approvalsOncePaused,
  decideApproval,
  definition,
  delay,
  eventually,
  executionLogs,
  noop,
  start,
  statuses,
  taskLogs,
  tasksOf,
  withTemporalClient,
} from './engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

const gated = () =>
  definition([
    { name: 'Prepare', type: noop },
    {
      name: 'Gate',
      type: noop,
      dependencies: ['Prepare'],
      manualApproval: { enabled: true, comment: 'Check the numbers' },
    },
    { name: 'Publish', type: noop, dependencies: ['Gate'] },
  ]);

async function startGated() {
  const { workflowId, executionId } = await start(trellis.admin, gated());
  const approvals = await approvalsOncePaused(trellis.admin, workflowId, executionId);
  return { workflowId, executionId, path: { workflowId, executionId }, approvals };
}

describe('approvals', () => {
  it('pauses at the gate, lists the approval, runs the task once approved', async () => {
    const { workflowId, executionId, path, approvals } = await startGated();
    expect(approvals).toHaveLength(1);
    const [approval] = approvals;
    expect(approval).toMatchObject({
      taskName: 'Gate',
      comment: 'Check the numbers',
      status: 'Pending',
      decidedAt: null,
      decidedBy: null,
    });
    expect(Date.parse(approval!.requestedAt)).not.toBeNaN();
    expect(await statuses(trellis.admin, workflowId, executionId)).toEqual({
      Prepare: 'Completed',
      Gate: 'WaitingForApproval',
      Publish: 'Pending',
    });
    // Operators see the same live state through the workflow's query.
    const state = await withTemporalClient(trellis, (client) =>
      client.workflow.getHandle(executionWorkflowId(executionId)).query(stateQuery),
    );
    expect(state).toEqual({
      executionId,
      status: 'Paused',
      tasks: { Prepare: 'Completed', Gate: 'WaitingForApproval', Publish: 'Pending' },
    });

    // A workflow-role user decides; the decision names them.
    const approver = trellis.client(basicAs('workflow'));
    await decideApproval(approver, workflowId, executionId, approval!.id, 'approve');
    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 20_000,
    });
    expect(finished.status).toBe('Completed');
    expect(await statuses(trellis.admin, workflowId, executionId)).toEqual({
      Prepare: 'Completed',
      Gate: 'Completed',
      Publish: 'Completed',
    });
    const [decided] = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/approvals',
      { params: { path } },
    );
    expect(decided).toMatchObject({
      id: approval!.id,
      status: 'Approved',
      decidedBy: 'workflow-user',
    });
    expect(Date.parse(decided!.decidedAt!)).not.toBeNaN();

    // The decision is recorded exactly once.
    for (const action of ['approve', 'reject'] as const) {
      await expectFailure(
        decideApproval(trellis.admin, workflowId, executionId, approval!.id, action),
        409,
      );
    }
    const gate = (await tasksOf(trellis.admin, workflowId, executionId)).Gate!;
    expect(await taskLogs(trellis.admin, workflowId, executionId, gate.id)).toEqual([
      `Waiting for approval ${approval!.id}: Check the numbers`,
      'Approved by workflow-user.',
      'Started.',
      expect.stringMatching(/^Completed in/),
    ]);
    const logs = await executionLogs(trellis.admin, workflowId, executionId);
    expect(logs).toContain('Paused: waiting for an approval.');
    expect(logs).toContain('Resumed.');
  });

  it('a rejection fails the task with the reason and the run goes on as for any failure', async () => {
    const { workflowId, executionId, approvals } = await startGated();
    const approvalId = approvals[0]!.id;
    await decideApproval(trellis.admin, workflowId, executionId, approvalId, 'reject');
    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 20_000,
    });
    expect(finished.status).toBe('Failed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(tasks.Gate).toMatchObject({ status: 'Failed', message: 'Rejected by admin.' });
    expect(tasks.Publish).toMatchObject({
      status: 'Skipped',
      message: "Skipped: dependency 'Gate' failed.",
    });
    await expectFailure(
      decideApproval(trellis.admin, workflowId, executionId, approvalId, 'reject'),
      409,
      `Approval ${approvalId} was already rejected.`,
    );
  });

  it('answers 404 for an unknown approval and keeps other tasks running while one waits', async () => {
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([
        { name: 'Gate', type: noop, manualApproval: { enabled: true } },
        { name: 'Busy', ...delay(1500) },
      ]),
    );
    const path = { workflowId, executionId };
    // Busy runs while the gate waits: the execution stays Running, then pauses.
    await eventually(async () =>
      expect(await statuses(trellis.admin, workflowId, executionId)).toEqual({
        Gate: 'WaitingForApproval',
        Busy: 'Running',
      }),
    );
    expect(
      (
        await trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
          params: { path },
        })
      ).status,
    ).toBe('Running');
    await trellis.admin.waitForExecution(workflowId, executionId, {
      until: ['Paused'],
      timeoutMs: 20_000,
    });
    await expectFailure(
      decideApproval(
        trellis.admin,
        workflowId,
        executionId,
        '00000000-0000-4000-8000-000000000000',
        'approve',
      ),
      404,
    );
    // Cancel while paused: the waiting task is canceled, later decisions are refused.
    await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path },
    });
    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 20_000,
    });
    expect(finished.status).toBe('Canceled');
    expect((await tasksOf(trellis.admin, workflowId, executionId)).Gate!.status).toBe('Canceled');
    const [approval] = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/approvals',
      { params: { path } },
    );
    await expectFailure(
      decideApproval(trellis.admin, workflowId, executionId, approval!.id, 'approve'),
      409,
    );
  });
});
