import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '#platform/logging.js';
import { executionWorkflowId } from '#protocol/ids.js';
import { approveSignal, rejectSignal, stateQuery } from '#protocol/messages.js';
import { recoverExecutions } from '#application/executions/recover-executions.js';
import { basicAs, startTrellis, type Trellis } from '../support/harness.js';
import { expectFailure } from '../api/api-error.js';
import { expectRawFailure, sendRaw } from '../api/http.js';
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
} from '../support/engine-support.js';

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

/** The run's approvals now. */
async function approvalsOf(workflowId: string, executionId: string) {
  return trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}/approvals', {
    params: { path: { workflowId, executionId } },
  });
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
      approvals: [{ approvalId: approval!.id, taskName: 'Gate' }],
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

  it('records who decided, when and why, and writes the reason to the task log', async () => {
    const approved = await startGated();
    const approver = trellis.client(basicAs('workflow'));
    await decideApproval(
      approver,
      approved.workflowId,
      approved.executionId,
      approved.approvals[0]!.id,
      'approve',
      '  The numbers match the ledger.  ',
    );
    await trellis.admin.waitForExecution(approved.workflowId, approved.executionId, {
      timeoutMs: 20_000,
    });
    const [decided] = await approvalsOf(approved.workflowId, approved.executionId);
    expect(decided).toMatchObject({
      status: 'Approved',
      decidedBy: 'workflow-user',
      reason: 'The numbers match the ledger.',
    });
    expect(Date.parse(decided!.decidedAt!)).toBeGreaterThanOrEqual(
      Date.parse(decided!.requestedAt),
    );
    const gate = (await tasksOf(trellis.admin, approved.workflowId, approved.executionId)).Gate!;
    expect(
      await taskLogs(trellis.admin, approved.workflowId, approved.executionId, gate.id),
    ).toContain('Approved by workflow-user: The numbers match the ledger.');

    const rejected = await startGated();
    await decideApproval(
      trellis.admin,
      rejected.workflowId,
      rejected.executionId,
      rejected.approvals[0]!.id,
      'reject',
      'The totals are off by a day.',
    );
    const finished = await trellis.admin.waitForExecution(
      rejected.workflowId,
      rejected.executionId,
      { timeoutMs: 20_000 },
    );
    expect(finished.status).toBe('Failed');
    const tasks = await tasksOf(trellis.admin, rejected.workflowId, rejected.executionId);
    const message = 'Rejected by admin: The totals are off by a day.';
    expect(tasks.Gate).toMatchObject({ status: 'Failed', message });
    expect(
      await taskLogs(trellis.admin, rejected.workflowId, rejected.executionId, tasks.Gate!.id),
    ).toContain(message);
    expect((await approvalsOf(rejected.workflowId, rejected.executionId))[0]).toMatchObject({
      status: 'Rejected',
      decidedBy: 'admin',
      reason: 'The totals are off by a day.',
    });

    // Deciding again is 409 and changes nothing.
    const conflict = await expectFailure(
      decideApproval(
        approver,
        rejected.workflowId,
        rejected.executionId,
        rejected.approvals[0]!.id,
        'approve',
        'Changed my mind.',
      ),
      409,
      `Approval ${rejected.approvals[0]!.id} was already rejected.`,
    );
    expect(conflict.codes).toEqual(['approval.already_decided']);
    expect((await approvalsOf(rejected.workflowId, rejected.executionId))[0]).toMatchObject({
      status: 'Rejected',
      decidedBy: 'admin',
      reason: 'The totals are off by a day.',
    });
  });

  it('refuses bad decision bodies with 400 (415 for text), changing nothing', async () => {
    const { workflowId, executionId, approvals } = await startGated();
    const approvalId = approvals[0]!.id;
    const url = `/workflows/${workflowId}/executions/${executionId}/approvals/${approvalId}`;
    const bad: Array<[string, string, RegExp]> = [
      ['approve', JSON.stringify({ reason: 5 }), /body\.reason/],
      ['reject', JSON.stringify({ reason: 'x', why: 'y' }), /body\.why/],
      ['approve', JSON.stringify({ reason: 'x'.repeat(2001) }), /body\.reason/],
      ['reject', JSON.stringify({ reason: 'a\u0000b' }), /body\.reason: contains a NUL/],
      ['approve', JSON.stringify(['Looks right.']), /body/],
      ['reject', '{"reason": ', /JSON/],
    ];
    for (const [action, body, message] of bad) {
      const response = await sendRaw(trellis.baseUrl, 'POST', `${url}/${action}`, {
        body,
        contentType: 'application/json',
      });
      expect(response.status, body).toBe(400);
      expect(
        (response.body as { messages: string[] }).messages.some((text) => message.test(text)),
        JSON.stringify(response.body),
      ).toBe(true);
    }
    await expectRawFailure(
      sendRaw(trellis.baseUrl, 'POST', `${url}/approve`, {
        body: 'reason=ok',
        contentType: 'text/plain',
      }),
      415,
    );
    expect((await approvalsOf(workflowId, executionId))[0]).toMatchObject({
      status: 'Pending',
      decidedBy: null,
      reason: null,
    });
    expect(await statuses(trellis.admin, workflowId, executionId)).toMatchObject({
      Gate: 'WaitingForApproval',
    });
    // The body stays optional: an empty object decides like no body at all.
    await trellis.admin.POST(
      '/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/approve',
      { params: { path: { workflowId, executionId, approvalId } }, body: {} },
    );
    expect(
      (await trellis.admin.waitForExecution(workflowId, executionId, { timeoutMs: 20_000 })).status,
    ).toBe('Completed');
    expect((await approvalsOf(workflowId, executionId))[0]).toMatchObject({
      status: 'Approved',
      reason: null,
    });
  });

  it('cancels the approvals of a canceled run; deciding one is 409 and changes nothing', async () => {
    const { workflowId, executionId, path, approvals } = await startGated();
    await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path },
    });
    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 20_000,
    });
    expect(finished.status).toBe('Canceled');
    const canceled = {
      id: approvals[0]!.id,
      status: 'Canceled',
      decidedBy: 'system',
      reason: 'The execution was canceled before a decision: Canceled by admin.',
    };
    const [approval] = await approvalsOf(workflowId, executionId);
    expect(approval).toMatchObject(canceled);
    expect(Date.parse(approval!.decidedAt!)).toBe(Date.parse(finished.executionEnd!));
    for (const action of ['approve', 'reject'] as const) {
      const error = await expectFailure(
        decideApproval(trellis.admin, workflowId, executionId, approvals[0]!.id, action, 'Late.'),
        409,
        `Approval ${approvals[0]!.id} was canceled: its execution ended before a decision.`,
      );
      expect(error.codes).toEqual(['approval.canceled']);
    }
    expect((await approvalsOf(workflowId, executionId))[0]).toMatchObject(canceled);
    expect(
      await trellis.admin.GET('/approvals', { params: { query: { status: 'Pending' } } }),
    ).not.toContainEqual(expect.objectContaining({ id: approvals[0]!.id }));
  });

  it("cancels a waiting approval when the run's timeout ends it", async () => {
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition(
        [
          { name: 'Gate', type: noop, manualApproval: { enabled: true } },
          { name: 'After', type: noop, dependencies: ['Gate'] },
        ],
        { configuration: { timeoutMilliseconds: 1500 } },
      ),
    );
    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 20_000,
    });
    expect(finished.status).toBe('Failed');
    expect((await approvalsOf(workflowId, executionId))[0]).toMatchObject({
      status: 'Canceled',
      decidedBy: 'system',
      reason: 'The execution failed before a decision: Timed out after 1500 ms.',
    });
  });

  it('cancels the approvals of a run terminated from Temporal once recovery finds it', async () => {
    const { workflowId, executionId, approvals } = await startGated();
    await withTemporalClient(trellis, (client) =>
      client.workflow.getHandle(executionWorkflowId(executionId)).terminate('operator test'),
    );
    // Terminated runs run no workflow code: nothing has changed yet.
    expect((await approvalsOf(workflowId, executionId))[0]!.status).toBe('Pending');
    const report = await recoverExecutions(
      {
        db: trellis.db,
        client: trellis.temporal.client,
        config: trellis.config,
        logger: createLogger({ Level: 'silent' }),
      },
      { graceMs: 0 },
    );
    expect(report.finished).toContain(executionId);
    expect((await approvalsOf(workflowId, executionId))[0]).toMatchObject({
      id: approvals[0]!.id,
      status: 'Canceled',
      decidedBy: 'system',
      reason:
        'The execution was canceled before a decision: Canceled: the Temporal run was terminated outside Trellis (e.g. from the Temporal UI).',
    });
    await expectFailure(
      decideApproval(trellis.admin, workflowId, executionId, approvals[0]!.id, 'approve'),
      409,
      /was canceled/,
    );
  });

  it('records a decision signaled from Temporal directly as decided by temporal', async () => {
    const approved = await startGated();
    // What `temporal workflow signal --name approve --input '{"approvalId": "..."}'` sends.
    await withTemporalClient(trellis, (client) =>
      client.workflow
        .getHandle(executionWorkflowId(approved.executionId))
        .signal(approveSignal, { approvalId: approved.approvals[0]!.id }),
    );
    expect(
      (
        await trellis.admin.waitForExecution(approved.workflowId, approved.executionId, {
          timeoutMs: 20_000,
        })
      ).status,
    ).toBe('Completed');
    const [approval] = await approvalsOf(approved.workflowId, approved.executionId);
    expect(approval).toMatchObject({ status: 'Approved', decidedBy: 'temporal', reason: null });
    expect(approval!.decidedAt).not.toBeNull();
    const gate = (await tasksOf(trellis.admin, approved.workflowId, approved.executionId)).Gate!;
    expect(
      await taskLogs(trellis.admin, approved.workflowId, approved.executionId, gate.id),
    ).toContain('Approved by temporal.');

    // A rejection with a reason; a signal for an approval that is not the run's changes nothing.
    const rejected = await startGated();
    await withTemporalClient(trellis, async (client) => {
      const handle = client.workflow.getHandle(executionWorkflowId(rejected.executionId));
      await handle.signal(rejectSignal, { approvalId: approved.approvals[0]!.id });
      await handle.signal(rejectSignal, {
        approvalId: rejected.approvals[0]!.id,
        reason: 'Stopped by the on-call operator.',
      });
    });
    expect(
      (
        await trellis.admin.waitForExecution(rejected.workflowId, rejected.executionId, {
          timeoutMs: 20_000,
        })
      ).status,
    ).toBe('Failed');
    expect((await approvalsOf(rejected.workflowId, rejected.executionId))[0]).toMatchObject({
      status: 'Rejected',
      decidedBy: 'temporal',
      reason: 'Stopped by the on-call operator.',
    });
    expect(
      (await tasksOf(trellis.admin, rejected.workflowId, rejected.executionId)).Gate,
    ).toMatchObject({
      status: 'Failed',
      message: 'Rejected by temporal: Stopped by the on-call operator.',
    });
    expect((await approvalsOf(approved.workflowId, approved.executionId))[0]).toMatchObject({
      status: 'Approved',
      decidedBy: 'temporal',
    });
  });
});
