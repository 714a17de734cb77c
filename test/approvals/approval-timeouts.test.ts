/**
 * Approvals that time out (`manualApproval.timeoutMilliseconds` and `onTimeout`): when no one
 * decides in time the default decision is applied, recorded as decided by `system`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFailure } from '../api/api-error.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  approvalsOncePaused,
  decideApproval,
  definition,
  noop,
  start,
  taskLogs,
  tasksOf,
} from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

const timingOut = (timeoutMilliseconds: number, onTimeout: 'Approve' | 'Reject') =>
  definition([
    { name: 'Prepare', type: noop },
    {
      name: 'Gate',
      type: noop,
      dependencies: ['Prepare'],
      manualApproval: { enabled: true, comment: 'Ship it?', timeoutMilliseconds, onTimeout },
    },
    { name: 'After', type: noop, dependencies: ['Gate'] },
  ]);

async function approvalsOf(workflowId: string, executionId: string) {
  return trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}/approvals', {
    params: { path: { workflowId, executionId } },
  });
}

describe('approval timeouts', () => {
  it('approves by default when no one decides in time, and the run goes on', async () => {
    const { workflowId, executionId } = await start(trellis.admin, timingOut(3000, 'Approve'));
    const [waiting] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
    expect(waiting).toMatchObject({ status: 'Pending', onTimeout: 'Approve' });
    expect(Date.parse(waiting!.timesOutAt!) - Date.parse(waiting!.requestedAt)).toBe(3000);

    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 20_000,
    });
    expect(finished.status).toBe('Completed');
    const reason = 'Timed out: no decision within 3000 ms (manualApproval.onTimeout: Approve).';
    const [approval] = await approvalsOf(workflowId, executionId);
    expect(approval).toMatchObject({ status: 'Approved', decidedBy: 'system', reason });
    expect(Date.parse(approval!.decidedAt!)).toBeGreaterThanOrEqual(
      Date.parse(waiting!.timesOutAt!) - 50,
    );
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect([tasks.Gate!.status, tasks.After!.status]).toEqual(['Completed', 'Completed']);
    expect(await taskLogs(trellis.admin, workflowId, executionId, tasks.Gate!.id)).toEqual([
      `Waiting for approval ${approval!.id}: Ship it?`,
      `Approved by system: ${reason}`,
      'Started.',
      expect.stringMatching(/^Completed in/),
    ]);
    // Decided: a person can no longer decide it.
    await expectFailure(
      decideApproval(trellis.admin, workflowId, executionId, approval!.id, 'reject'),
      409,
      `Approval ${approval!.id} was already approved.`,
    );
  });

  it('rejects by default as a person would: the task fails and its dependants are skipped', async () => {
    const { workflowId, executionId } = await start(trellis.admin, timingOut(300, 'Reject'));
    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 20_000,
    });
    expect(finished.status).toBe('Failed');
    const reason = 'Timed out: no decision within 300 ms (manualApproval.onTimeout: Reject).';
    expect((await approvalsOf(workflowId, executionId))[0]).toMatchObject({
      status: 'Rejected',
      decidedBy: 'system',
      reason,
    });
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(tasks.Gate).toMatchObject({
      status: 'Failed',
      message: `Rejected by system: ${reason}`,
    });
    expect(tasks.After).toMatchObject({
      status: 'Skipped',
      message: "Skipped: dependency 'Gate' failed.",
    });
  });

  it('a person deciding first wins: the timeout does not apply', async () => {
    const { workflowId, executionId } = await start(trellis.admin, timingOut(4000, 'Reject'));
    const [waiting] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
    await decideApproval(trellis.admin, workflowId, executionId, waiting!.id, 'approve', 'Go.');
    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 20_000,
    });
    expect(finished.status).toBe('Completed');
    // Past the timeout, the person's decision still stands.
    const untilPast = Date.parse(waiting!.timesOutAt!) + 500 - Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, untilPast)));
    expect((await approvalsOf(workflowId, executionId))[0]).toMatchObject({
      status: 'Approved',
      decidedBy: 'admin',
      reason: 'Go.',
    });
    const gate = (await tasksOf(trellis.admin, workflowId, executionId)).Gate!;
    expect(await taskLogs(trellis.admin, workflowId, executionId, gate.id)).not.toContainEqual(
      expect.stringMatching(/system/),
    );
  });

  it('refuses a definition whose timeout misses its decision, or is not a duration', async () => {
    const gate = (manualApproval: Record<string, unknown>) =>
      definition([
        { name: 'Gate', type: noop, manualApproval: { enabled: true, ...manualApproval } },
      ]);
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { timeoutMilliseconds: 1000 },
        'tasks[0].manualApproval.onTimeout: is required with timeoutMilliseconds',
      ],
      [
        { onTimeout: 'Approve' },
        'tasks[0].manualApproval.timeoutMilliseconds: is required with onTimeout',
      ],
      [
        { timeoutMilliseconds: 1000, onTimeout: 'Escalate' },
        'tasks[0].manualApproval.onTimeout: must be one of Approve, Reject',
      ],
      [
        { timeoutMilliseconds: 0, onTimeout: 'Approve' },
        'tasks[0].manualApproval.timeoutMilliseconds: must be >= 1',
      ],
    ];
    const before = await trellis.admin.GET('/workflows');
    for (const [approval, message] of cases) {
      await expectFailure(
        trellis.admin.POST('/workflows/Add', {
          body: { definition: JSON.stringify(gate(approval)) },
        }),
        400,
        message,
      );
    }
    expect(await trellis.admin.GET('/workflows')).toHaveLength(before.length);
  });
});
