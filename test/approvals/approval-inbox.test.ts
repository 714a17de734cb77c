/**
 * `GET /approvals`: the approvals of every workflow, the inbox of what waits for a person.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAuthMatrix } from '../api/auth-matrix.js';
import { expectFailure } from '../api/api-error.js';
import { basicAs, startTrellis, type Trellis } from '../support/harness.js';
import {
  approvalsOncePaused,
  decideApproval,
  definition,
  noop,
  start,
  tasksOf,
} from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

const gated = (comment: string) =>
  definition([
    { name: 'Gate', type: noop, manualApproval: { enabled: true, comment } },
    { name: 'After', type: noop, dependencies: ['Gate'] },
  ]);

describe('GET /approvals', () => {
  it('lists the pending approvals of every workflow, oldest first, in pages', async () => {
    // Two workflows: one with two paused runs, one with a run whose gate times out much later.
    const first = await start(trellis.admin, gated('First'));
    const firstApprovals = await approvalsOncePaused(
      trellis.admin,
      first.workflowId,
      first.executionId,
    );
    const again = await trellis.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId: first.workflowId } },
      body: { workflowId: first.workflowId },
    });
    const againApprovals = await approvalsOncePaused(
      trellis.admin,
      first.workflowId,
      again.executionId,
    );
    const second = await start(
      trellis.admin,
      definition([
        {
          name: 'Sign',
          type: noop,
          manualApproval: {
            enabled: true,
            comment: 'Second',
            timeoutMilliseconds: 3_600_000,
            onTimeout: 'Reject',
          },
        },
      ]),
    );
    const secondApprovals = await approvalsOncePaused(
      trellis.admin,
      second.workflowId,
      second.executionId,
    );

    // A workflow-role user sees all three, each naming its workflow, execution and task.
    const inbox = trellis.client(basicAs('workflow'));
    const pending = await inbox.GET('/approvals', { params: { query: { status: 'Pending' } } });
    expect(pending.map((approval) => approval.id)).toEqual([
      firstApprovals[0]!.id,
      againApprovals[0]!.id,
      secondApprovals[0]!.id,
    ]);
    const gate = (await tasksOf(trellis.admin, first.workflowId, first.executionId)).Gate!;
    expect(pending[0]).toEqual({
      id: firstApprovals[0]!.id,
      workflowId: first.workflowId,
      executionId: first.executionId,
      taskExecutionId: gate.id,
      taskName: 'Gate',
      comment: 'First',
      status: 'Pending',
      requestedAt: firstApprovals[0]!.requestedAt,
      timesOutAt: null,
      onTimeout: null,
      decidedAt: null,
      decidedBy: null,
      reason: null,
      inputs: null,
      decidedVia: null,
      decidedViaNotification: null,
      form: {},
      approvers: null,
      callerMayDecide: true,
      callerRefusal: null,
    });
    // One that times out says when, and what it will decide.
    expect(pending[2]).toMatchObject({ taskName: 'Sign', onTimeout: 'Reject' });
    expect(Date.parse(pending[2]!.timesOutAt!) - Date.parse(pending[2]!.requestedAt)).toBe(
      3_600_000,
    );

    // Paged like every list: pagination in the envelope, data an array.
    const firstPage = await inbox.envelope.GET('/approvals', {
      params: { query: { status: 'Pending', page: 1, pageSize: 2 } },
    });
    expect(firstPage.data.map((approval) => approval.id)).toEqual([
      firstApprovals[0]!.id,
      againApprovals[0]!.id,
    ]);
    expect(firstPage.pagination).toEqual({ page: 1, pageSize: 2, totalCount: 3, totalPages: 2 });
    const secondPage = await inbox.page('/approvals', {
      params: { query: { status: 'Pending', page: 2, pageSize: 2 } },
    });
    expect(secondPage.data.map((approval) => approval.id)).toEqual([secondApprovals[0]!.id]);
    const everyOne = [];
    for await (const approval of inbox.all('/approvals', {
      params: { query: { status: 'Pending', pageSize: 1 } },
    })) {
      everyOne.push(approval.id);
    }
    expect(everyOne).toEqual(pending.map((approval) => approval.id));

    // One workflow's only.
    const ofSecond = await inbox.GET('/approvals', {
      params: { query: { workflowId: second.workflowId } },
    });
    expect(ofSecond.map((approval) => approval.taskName)).toEqual(['Sign']);

    // A decided approval leaves the inbox and shows under its status, with the decision.
    await decideApproval(
      inbox,
      first.workflowId,
      first.executionId,
      firstApprovals[0]!.id,
      'approve',
      'Looks right.',
    );
    const stillPending = await inbox.GET('/approvals', {
      params: { query: { status: 'Pending' } },
    });
    expect(stillPending.map((approval) => approval.id)).toEqual([
      againApprovals[0]!.id,
      secondApprovals[0]!.id,
    ]);
    const approved = await inbox.GET('/approvals', { params: { query: { status: 'Approved' } } });
    expect(approved).toEqual([
      expect.objectContaining({
        id: firstApprovals[0]!.id,
        status: 'Approved',
        decidedBy: 'workflow-user',
        reason: 'Looks right.',
      }),
    ]);
    // Without a filter: everything, decided or not.
    expect(await inbox.GET('/approvals')).toHaveLength(3);

    // Leave nothing waiting behind.
    for (const run of [first, { ...first, executionId: again.executionId }, second]) {
      await trellis.admin
        .POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
          params: { path: { workflowId: run.workflowId, executionId: run.executionId } },
        })
        .catch(() => undefined);
    }
  });

  it('refuses bad filters: 400 for a malformed id, status or page, 404 for an unknown workflow', async () => {
    await expectFailure(
      trellis.admin.GET('/approvals', { params: { query: { workflowId: 'not-a-uuid' } } }),
      400,
      /workflowId/,
    );
    await expectFailure(
      trellis.admin.GET('/approvals', {
        params: { query: { status: 'Waiting' as 'Pending' } },
      }),
      400,
      /status/,
    );
    await expectFailure(
      trellis.admin.GET('/approvals', { params: { query: { pageSize: 0 } } }),
      400,
      /pageSize/,
    );
    const unknown = '00000000-0000-4000-8000-000000000000';
    const error = await expectFailure(
      trellis.admin.GET('/approvals', { params: { query: { workflowId: unknown } } }),
      404,
      `Workflow "${unknown}" was not found.`,
    );
    expect(error.codes).toEqual(['workflow.not_found']);
  });

  describeAuthMatrix({
    role: 'workflow',
    trellis: () => trellis,
    call: (client) => client.GET('/approvals'),
  });
});
