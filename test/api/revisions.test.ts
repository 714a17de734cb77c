import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleId } from '#protocol/ids.js';
import { expectFailure } from './api-error.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  addWorkflow,
  approvalsOncePaused,
  decideApproval,
  definition,
  eventually,
  noop,
  statuses,
} from '../support/engine-support.js';

let trellis: Trellis;
beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

const log = (message: string) => ({ type: { plugin: 'Flow/Log' }, parameters: { message } });

async function update(workflowId: string, text: string) {
  return trellis.admin.envelope.PUT('/workflows/{workflowId}', {
    params: { path: { workflowId } },
    body: { workflowId, definition: text },
  });
}

async function execute(workflowId: string, revision?: number) {
  const started = await trellis.admin.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
    body: { workflowId, ...(revision === undefined ? {} : { revision }) },
  });
  return started.executionId;
}

const detail = (workflowId: string, executionId: string) =>
  trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
    params: { path: { workflowId, executionId } },
  });

describe('workflow revisions', () => {
  it('keeps every definition a workflow has had, numbered, newest first', async () => {
    const first = definition([{ name: 'One', type: noop }]);
    const workflowId = await addWorkflow(trellis.admin, first);
    const second = { ...first, tasks: [{ name: 'Two', type: noop }] };
    const third = {
      ...first,
      name: `${first.name}-renamed`,
      tasks: [{ name: 'Three', type: noop }],
    };
    expect((await update(workflowId, JSON.stringify(second))).messages).toEqual([
      `Workflow "${first.name}" was updated (revision 2).`,
    ]);
    await update(workflowId, JSON.stringify(third));

    const current = await trellis.admin.GET('/workflows/{workflowId}', {
      params: { path: { workflowId } },
    });
    expect(current).toMatchObject({ revision: 3, name: third.name });
    const revisions = await trellis.admin.GET('/workflows/{workflowId}/revisions', {
      params: { path: { workflowId } },
    });
    expect(revisions).toEqual([
      { revision: 3, name: third.name, createdAt: expect.any(String), current: true, source: null },
      {
        revision: 2,
        name: first.name,
        createdAt: expect.any(String),
        current: false,
        source: null,
      },
      {
        revision: 1,
        name: first.name,
        createdAt: expect.any(String),
        current: false,
        source: null,
      },
    ]);
    const times = revisions.map((revision) => Date.parse(revision.createdAt));
    expect(times[0]).toBeGreaterThanOrEqual(times[1]!);
    expect(times[1]).toBeGreaterThanOrEqual(times[2]!);

    const one = await trellis.admin.GET('/workflows/{workflowId}/revisions/{revision}', {
      params: { path: { workflowId, revision: 1 } },
    });
    expect(one).toEqual({
      workflowId,
      revision: 1,
      name: first.name,
      workflow: JSON.stringify(first),
      createdAt: revisions[2]!.createdAt,
      current: false,
      source: null,
    });

    const page = await trellis.admin.page('/workflows/{workflowId}/revisions', {
      params: { path: { workflowId }, query: { page: 2, pageSize: 2 } },
    });
    expect(page.data.map((revision) => revision.revision)).toEqual([1]);
    expect(page.pagination).toEqual({ page: 2, pageSize: 2, totalCount: 3, totalPages: 2 });
  });

  it('answers 404 for a revision the workflow never had or an unknown workflow, 400 for a malformed one', async () => {
    const workflowId = await addWorkflow(trellis.admin, definition([{ name: 'A', type: noop }]));
    const revision = (n: number | string) =>
      trellis.admin.GET('/workflows/{workflowId}/revisions/{revision}', {
        params: { path: { workflowId, revision: n as number } },
      });
    const missing = await expectFailure(revision(2), 404, 'has no revision 2');
    expect(missing.codes).toEqual(['revision.not_found']);
    await expectFailure(revision(0), 400, 'path.revision');
    await expectFailure(revision('x'), 400, 'path.revision');
    const unknown = '00000000-0000-4000-8000-000000000000';
    await expectFailure(
      trellis.admin.GET('/workflows/{workflowId}/revisions', {
        params: { path: { workflowId: unknown } },
      }),
      404,
      unknown,
    );
  });

  it('lets a run keep the revision it started with when the workflow is updated meanwhile', async () => {
    const original = definition([
      { name: 'Gate', type: noop, manualApproval: { enabled: true } },
      { name: 'Before', ...log('revision 1'), dependencies: ['Gate'] },
    ]);
    const workflowId = await addWorkflow(trellis.admin, original);
    const executionId = await execute(workflowId);
    const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);

    const changed = { ...original, tasks: [{ name: 'After', ...log('revision 2') }] };
    await update(workflowId, JSON.stringify(changed));
    await decideApproval(trellis.admin, workflowId, executionId, approval!.id, 'approve');
    const ended = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 30_000,
    });
    expect(ended).toMatchObject({
      status: 'Completed',
      revision: 1,
      workflow: JSON.stringify(original),
    });
    expect(await statuses(trellis.admin, workflowId, executionId)).toEqual({
      Gate: 'Completed',
      Before: 'Completed',
    });

    // A run started now runs revision 2; a rerun of the first keeps revision 1.
    const next = await execute(workflowId);
    const nextEnded = await trellis.admin.waitForExecution(workflowId, next, { timeoutMs: 30_000 });
    expect(nextEnded).toMatchObject({ status: 'Completed', revision: 2 });
    expect(await statuses(trellis.admin, workflowId, next)).toEqual({ After: 'Completed' });
    const rerun = await trellis.admin.POST(
      '/workflows/{workflowId}/executions/{executionId}/rerun',
      { params: { path: { workflowId, executionId } } },
    );
    expect(await detail(workflowId, rerun.executionId)).toMatchObject({
      revision: 1,
      workflow: JSON.stringify(original),
    });
  });

  it('runs an earlier revision when execute asks for it, and refuses one the workflow never had', async () => {
    const original = definition([{ name: 'Old', ...log('old') }]);
    const workflowId = await addWorkflow(trellis.admin, original);
    await update(
      workflowId,
      JSON.stringify({ ...original, tasks: [{ name: 'New', ...log('new') }] }),
    );

    const executionId = await execute(workflowId, 1);
    const ended = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 30_000,
    });
    expect(ended).toMatchObject({ status: 'Completed', revision: 1 });
    expect(await statuses(trellis.admin, workflowId, executionId)).toEqual({ Old: 'Completed' });

    const before = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    await expectFailure(
      trellis.admin.POST('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
        body: { workflowId, revision: 3 },
      }),
      400,
      `body.revision: workflow "${original.name}" has no revision 3 (its revisions are 1 to 2).`,
    );
    await expectFailure(
      trellis.admin.POST('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
        body: { workflowId, revision: 0 },
      }),
      400,
      'body.revision',
    );
    expect(
      await trellis.admin.GET('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
      }),
    ).toEqual(before);
  });

  it('records the revision a schedule firing ran, and deletes revisions with their workflow', async () => {
    const original = definition([{ name: 'First', type: noop }]);
    const workflowId = await addWorkflow(trellis.admin, original);
    await update(
      workflowId,
      JSON.stringify({ ...original, tasks: [{ name: 'Second', type: noop }] }),
    );
    const { triggerId } = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      body: { workflowId, type: 'TimeBased', status: 'Active', properties: { cron: '0 0 1 1 *' } },
    });
    await trellis.temporal.client.schedule.getHandle(scheduleId(triggerId)).trigger();
    const [listed] = await eventually(async () => {
      const executions = await trellis.admin.GET('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
      });
      expect(executions).toHaveLength(1);
      return executions;
    });
    const fired = await trellis.admin.waitForExecution(workflowId, listed!.id, {
      timeoutMs: 30_000,
    });
    expect(fired).toMatchObject({ status: 'Completed', revision: 2 });

    await trellis.admin.DELETE('/workflows/{workflowId}', { params: { path: { workflowId } } });
    const left = await trellis.db
      .selectFrom('workflowRevision')
      .select('revision')
      .where('workflowId', '=', workflowId)
      .execute();
    expect(left).toEqual([]);
  });
});
