/**
 * Approvals that carry data (`manualApproval.inputs`, read by `Approval()` and `Approval('Task')`)
 * and that only some people may decide (`manualApproval.approvers`), through the real server,
 * worker, Temporal and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrellisClient } from '../../sdk/src/index.js';
import { expectFailure } from '../api/api-error.js';
import { scheduleId } from '#protocol/ids.js';
import {
  addWorkflow,
  approvalsOncePaused,
  definition,
  eventually,
  start,
  tasksOf,
  taskLogs,
  type Definition,
} from '../support/engine-support.js';
import {
  basicAs,
  mintToken,
  startTrellis,
  tokenUser,
  users,
  type Trellis,
} from '../support/harness.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
/** TimeBased triggers made here: their schedules go when the file ends. */
const schedules: string[] = [];
afterAll(async () => {
  for (const triggerId of schedules) {
    await trellis.temporal.client.schedule
      .getHandle(scheduleId(triggerId))
      .delete()
      .catch(() => undefined);
  }
  await trellis?.stop();
});

const log = (message: string) => ({
  type: { plugin: 'Flow/Log' },
  parameters: { message, level: 'Info' },
});

/** Gate asks for an amount and a note; Publish (after it) reads the decision. */
const withForm = (manualApproval: Record<string, unknown> = {}): Definition =>
  definition(
    [
      {
        name: 'Gate',
        ...log('Paying $[Approval().inputs.amount] ($[Approval().inputs.note])'),
        manualApproval: {
          enabled: true,
          comment: 'How much?',
          inputs: {
            amount: { type: 'integer', required: true, description: 'Amount in cents' },
            note: { type: 'string', default: 'none' },
          },
          ...manualApproval,
        },
      },
      {
        name: 'Publish',
        dependencies: ['Gate'],
        ...log(
          "$[Approval('Gate').decidedBy] approved $[Approval('Gate').inputs.amount] because $[Approval('Gate').reason]",
        ),
      },
    ],
    { outputs: { amount: "Approval('Gate').inputs.amount", decision: "$[Approval('Gate')]" } },
  );

function approvalPath(workflowId: string, executionId: string, approvalId: string) {
  return { params: { path: { workflowId, executionId, approvalId } } };
}

async function approve(
  client: TrellisClient,
  ids: { workflowId: string; executionId: string; approvalId: string },
  body?: { reason?: string; inputs?: Record<string, unknown> },
) {
  return client.POST(
    '/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/approve',
    {
      ...approvalPath(ids.workflowId, ids.executionId, ids.approvalId),
      ...(body ? { body } : {}),
    },
  );
}

async function startPaused(client: TrellisClient, def: Definition) {
  const { workflowId, executionId } = await start(client, def);
  const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
  return { workflowId, executionId, approvalId: approval!.id, approval: approval! };
}

async function stillPending(ids: { workflowId: string; executionId: string }) {
  const [approval] = await trellis.admin.GET(
    '/workflows/{workflowId}/executions/{executionId}/approvals',
    { params: { path: ids } },
  );
  expect(approval).toMatchObject({ status: 'Pending', decidedBy: null, inputs: null });
}

describe('approval inputs', () => {
  it('shows the form, records the values, and the gated and later tasks read them', async () => {
    const ids = await startPaused(trellis.admin, withForm());
    expect(ids.approval).toMatchObject({
      form: { amount: { type: 'integer', required: true }, note: { type: 'string' } },
      approvers: null,
      callerMayDecide: true,
      callerRefusal: null,
      inputs: null,
      decidedVia: null,
    });
    await approve(trellis.admin, ids, { reason: 'budgeted', inputs: { amount: 1250 } });
    const finished = await trellis.admin.waitForExecution(ids.workflowId, ids.executionId, {
      timeoutMs: 30_000,
    });
    expect(finished.status).toBe('Completed');
    const tasks = await tasksOf(trellis.admin, ids.workflowId, ids.executionId);
    const output = async (name: string) =>
      (
        await trellis.admin.GET(
          '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}',
          { params: { path: { ...ids, taskExecutionId: tasks[name]!.id } } },
        )
      ).output;
    expect(await output('Gate')).toMatchObject({ message: 'Paying 1250 (none)' });
    expect(await output('Publish')).toMatchObject({
      message: 'admin approved 1250 because budgeted',
    });
    const detail = await trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
      params: { path: ids },
    });
    expect(detail.outputs).toMatchObject({
      amount: 1250,
      decision: {
        status: 'Approved',
        decidedBy: 'admin',
        reason: 'budgeted',
        inputs: { amount: 1250, note: 'none' },
      },
    });
    const [approval] = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/approvals',
      { params: { path: ids } },
    );
    expect(approval).toMatchObject({
      status: 'Approved',
      inputs: { amount: 1250, note: 'none' },
      decidedVia: 'Api',
      decidedViaNotification: null,
    });
  });

  it('refuses bad inputs with 400 naming each field, and decides nothing', async () => {
    const ids = await startPaused(trellis.admin, withForm());
    await expectFailure(
      approve(trellis.admin, ids),
      400,
      'body.inputs.amount: is required (integer)',
    );
    const error = await expectFailure(
      approve(trellis.admin, ids, { inputs: { amount: 'lots', extra: 1 } }),
      400,
    );
    expect(error.messages).toEqual(
      expect.arrayContaining([
        expect.stringContaining('body.inputs.amount: must be an integer'),
        expect.stringContaining(
          'body.inputs.extra: is not a declared input (declared: amount, note)',
        ),
      ]),
    );
    await expectFailure(
      trellis.admin.POST(
        '/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/reject',
        {
          ...approvalPath(ids.workflowId, ids.executionId, ids.approvalId),
          // The contract says a rejection's inputs are empty.
          body: { inputs: { amount: 1 } } as never,
        },
      ),
      400,
      'body.inputs.amount: is not allowed',
    );
    await stillPending(ids);
    // Still decidable once the inputs are right.
    await approve(trellis.admin, ids, { inputs: { amount: 5 } });
    const finished = await trellis.admin.waitForExecution(ids.workflowId, ids.executionId, {
      timeoutMs: 30_000,
    });
    expect(finished.status).toBe('Completed');
  });

  it('refuses inputs for an approval that declares none', async () => {
    const def = definition([{ name: 'Gate', ...log('go'), manualApproval: { enabled: true } }]);
    const ids = await startPaused(trellis.admin, def);
    await expectFailure(
      approve(trellis.admin, ids, { inputs: { amount: 1 } }),
      400,
      'body.inputs.amount: is not a declared input (the approval declares none)',
    );
    await stillPending(ids);
    await approve(trellis.admin, ids);
  });

  it('puts the rejection reason in the task message and log', async () => {
    const ids = await startPaused(trellis.admin, withForm());
    await trellis.admin.POST(
      '/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/reject',
      {
        ...approvalPath(ids.workflowId, ids.executionId, ids.approvalId),
        body: { reason: 'over budget' },
      },
    );
    const finished = await trellis.admin.waitForExecution(ids.workflowId, ids.executionId, {
      timeoutMs: 30_000,
    });
    expect(finished.status).toBe('Failed');
    const gate = (await tasksOf(trellis.admin, ids.workflowId, ids.executionId)).Gate!;
    expect(gate).toMatchObject({ status: 'Failed', message: 'Rejected by admin: over budget' });
    expect(await taskLogs(trellis.admin, ids.workflowId, ids.executionId, gate.id)).toContain(
      'Rejected by admin: over budget',
    );
  });

  it('checks Approval() reads when the workflow is added', async () => {
    const bad = definition([
      { name: 'Plain', ...log('$[Approval().inputs.x]') },
      { name: 'Later', dependencies: ['Plain'], ...log("$[Approval('Plain').inputs.x]") },
      { name: 'Other', ...log("$[Approval('Nope')]") },
    ]);
    const error = await expectFailure(
      trellis.admin.POST('/workflows/Add', { body: { definition: JSON.stringify(bad) } }),
      400,
    );
    expect(error.messages.join('\n')).toMatch(
      /tasks\[0\]\.parameters\.message: Approval\(\) reads the task's own approval, and task 'Plain' asks for none/,
    );
    expect(error.messages.join('\n')).toMatch(
      /tasks\[1\]\.parameters\.message: Approval\('Plain'\) names a task that asks for no approval/,
    );
    expect(error.messages.join('\n')).toMatch(
      /tasks\[2\]\.parameters\.message: Approval\('Nope'\) names no task/,
    );
  });
});

describe('approvers', () => {
  const alice = () =>
    trellis.client({ bearer: () => mintToken({ subject: 'alice', roles: ['workflow'] }) });
  const bob = () =>
    trellis.client({ bearer: () => mintToken({ subject: 'bob', roles: ['workflow'] }) });

  it('lets only the listed users decide, with 403 naming them to others', async () => {
    const def = withForm({ approvers: { users: [tokenUser('alice')] } });
    const ids = await startPaused(trellis.admin, def);
    expect(ids.approval).toMatchObject({
      callerMayDecide: false,
      approvers: { users: [tokenUser('alice')] },
    });
    expect(ids.approval.callerRefusal).toContain(`the users "${tokenUser('alice')}"`);
    for (const client of [bob(), trellis.admin]) {
      await expectFailure(
        approve(client, ids, { inputs: { amount: 1 } }),
        403,
        `(is not an approver): it may be decided by the users "${tokenUser('alice')}", except the user who started the run ("admin")`,
      );
      await expectFailure(
        client.POST(
          '/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/reject',
          approvalPath(ids.workflowId, ids.executionId, ids.approvalId),
        ),
        403,
      );
    }
    await stillPending(ids);
    const [seenByAlice] = await alice().GET('/approvals', {
      params: { query: { status: 'Pending', workflowId: ids.workflowId } },
    });
    expect(seenByAlice).toMatchObject({ callerMayDecide: true, callerRefusal: null });
    await approve(alice(), ids, { inputs: { amount: 7 } });
    const finished = await trellis.admin.waitForExecution(ids.workflowId, ids.executionId, {
      timeoutMs: 30_000,
    });
    expect(finished.status).toBe('Completed');
  });

  it('lets role holders decide', async () => {
    const ids = await startPaused(alice(), withForm({ approvers: { roles: ['admin'] } }));
    await expectFailure(
      approve(bob(), ids, { inputs: { amount: 1 } }),
      403,
      'holders of the roles admin',
    );
    await approve(trellis.admin, ids, { inputs: { amount: 1 } });
    const [approval] = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/approvals',
      { params: { path: ids } },
    );
    expect(approval).toMatchObject({ status: 'Approved', decidedBy: 'admin' });
  });

  it('refuses the user who started the run unless self-approval is allowed', async () => {
    const refused = await startPaused(
      alice(),
      withForm({ approvers: { users: [tokenUser('alice'), tokenUser('bob')] } }),
    );
    await expectFailure(
      approve(alice(), refused, { inputs: { amount: 1 } }),
      403,
      '(started the run)',
    );
    await stillPending(refused);
    await approve(bob(), refused, { inputs: { amount: 1 } });

    const allowed = await startPaused(
      alice(),
      withForm({ approvers: { users: [tokenUser('alice')], allowSelfApproval: true } }),
    );
    await approve(alice(), allowed, { inputs: { amount: 2 } });
    const finished = await trellis.admin.waitForExecution(allowed.workflowId, allowed.executionId, {
      timeoutMs: 30_000,
    });
    expect(finished.status).toBe('Completed');
  });

  it("keeps a token's subject apart from the Basic user of that name", async () => {
    const tokenAdmin = trellis.client({
      bearer: () => mintToken({ subject: users.admin.username, roles: ['workflow'] }),
    });
    const listed = await startPaused(alice(), withForm({ approvers: { users: ['admin'] } }));
    await expectFailure(
      approve(tokenAdmin, listed, { inputs: { amount: 1 } }),
      403,
      `User "${tokenUser('admin')}" may not decide approval ${listed.approvalId} of task "Gate" (is not an approver)`,
    );
    await stillPending(listed);
    await approve(trellis.admin, listed, { inputs: { amount: 1 } });

    // Started by the Basic admin: the token named "admin" is someone else, and may decide.
    const startedByAdmin = await startPaused(trellis.admin, withForm({ approvers: {} }));
    await approve(tokenAdmin, startedByAdmin, { inputs: { amount: 2 } });
    const [approval] = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/approvals',
      { params: { path: startedByAdmin } },
    );
    expect(approval).toMatchObject({ status: 'Approved', decidedBy: tokenUser('admin') });
  });

  it('keeps the seed behaviour without approvers: the starter may decide', async () => {
    const workflowUser = trellis.client(basicAs('workflow'));
    const ids = await startPaused(workflowUser, withForm());
    await approve(workflowUser, ids, { inputs: { amount: 3 } });
    const finished = await trellis.admin.waitForExecution(ids.workflowId, ids.executionId, {
      timeoutMs: 30_000,
    });
    expect(finished.status).toBe('Completed');
  });
});

describe('runs started by a trigger', () => {
  const workflowUser = () => trellis.client(basicAs('workflow'));
  /** Anyone may decide Gate, except the run's starter. */
  const fourEyes = () =>
    definition([
      {
        name: 'Gate',
        ...log('Gated'),
        manualApproval: { enabled: true, approvers: { allowSelfApproval: false } },
      },
    ]);

  async function createTrigger(
    client: TrellisClient,
    workflowId: string,
    type: 'Webhook' | 'TimeBased',
    properties: Record<string, unknown>,
  ) {
    const { triggerId } = await client.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      body: { workflowId, type, status: 'Active', properties },
    });
    if (type === 'TimeBased') schedules.push(triggerId);
    return triggerId;
  }

  /** An unsigned delivery to the trigger's hook; the ids of the run it started. */
  async function fire(workflowId: string, triggerId: string) {
    const response = await fetch(`${trellis.baseUrl}/hooks/${triggerId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(202);
    const { data } = (await response.json()) as { data: { executionId: string } };
    return pausedApproval(workflowId, data.executionId);
  }

  async function pausedApproval(workflowId: string, executionId: string) {
    const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
    return { workflowId, executionId, approvalId: approval!.id };
  }

  /** The starter is refused (naming them), the other user decides. */
  async function onlyTheOtherDecides(
    ids: { workflowId: string; executionId: string; approvalId: string },
    starter: TrellisClient,
    starterName: string,
    other: TrellisClient,
  ) {
    await expectFailure(
      approve(starter, ids),
      403,
      `may not decide approval ${ids.approvalId} of task "Gate" (started the run): it may be decided by anyone who may approve, except the user who started the run ("${starterName}")`,
    );
    await stillPending(ids);
    await approve(other, ids);
    const finished = await trellis.admin.waitForExecution(ids.workflowId, ids.executionId, {
      timeoutMs: 30_000,
    });
    expect(finished.status).toBe('Completed');
  }

  it('counts who created an unsigned Webhook trigger as the starter of the runs it fires', async () => {
    const workflowId = await addWorkflow(trellis.admin, fourEyes());
    const triggerId = await createTrigger(workflowUser(), workflowId, 'Webhook', {
      signature: 'None',
    });
    const ids = await fire(workflowId, triggerId);
    await onlyTheOtherDecides(ids, workflowUser(), users.workflow.username, trellis.admin);
  });

  it('counts who last changed the trigger, not who created it', async () => {
    const workflowId = await addWorkflow(trellis.admin, fourEyes());
    const triggerId = await createTrigger(trellis.admin, workflowId, 'Webhook', {
      signature: 'None',
    });
    await workflowUser().PUT('/workflows/{workflowId}/triggers/{triggerId}', {
      params: { path: { workflowId, triggerId } },
      body: {
        workflowId,
        triggerId,
        type: 'Webhook',
        status: 'Active',
        properties: { signature: 'None', note: 'mine now' },
      },
    });
    const ids = await fire(workflowId, triggerId);
    await onlyTheOtherDecides(ids, workflowUser(), users.workflow.username, trellis.admin);
  });

  it("counts who asked for a backfill as the starter of the schedule's runs", async () => {
    const workflowId = await addWorkflow(trellis.admin, fourEyes());
    // Once a year, on a day long gone: the backfill's is the only run.
    const triggerId = await createTrigger(trellis.admin, workflowId, 'TimeBased', {
      cron: '0 3 1 1 *',
    });
    await workflowUser().POST('/workflows/{workflowId}/triggers/{triggerId}/backfill', {
      params: { path: { workflowId, triggerId } },
      body: { from: '2025-01-01T00:00:00.000Z', to: '2025-01-02T00:00:00.000Z' },
    });
    const executionId = await eventually(async () => {
      const [run] = await trellis.admin.GET('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
      });
      expect(run).toBeDefined();
      return run!.id;
    }, 30_000);
    const ids = await pausedApproval(workflowId, executionId);
    await onlyTheOtherDecides(ids, workflowUser(), users.workflow.username, trellis.admin);
  });
});
