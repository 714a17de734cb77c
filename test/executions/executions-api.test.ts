import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTrellis, type Trellis } from '../support/harness.js';
import { expectFailure } from '../api/api-error.js';
import {
  addWorkflow,
  definition,
  delay,
  eventually,
  execute,
  noop,
  run,
  tasksOf,
} from '../support/engine-support.js';

let trellis: Trellis;
let offline: Trellis;

beforeAll(async () => {
  [trellis, offline] = await Promise.all([
    startTrellis({ worker: true }),
    startTrellis({ temporal: 'unreachable' }),
  ]);
});
afterAll(async () => {
  await Promise.all([trellis?.stop(), offline?.stop()]);
});

const unknownId = '00000000-0000-4000-8000-000000000000';

describe('executions API', () => {
  it('starts an execution: shapes of the start, the detail, the list and the tasks', async () => {
    const def = definition([
      { name: 'One', type: noop },
      { name: 'Two', type: noop, dependencies: ['One'] },
    ]);
    const workflowId = await addWorkflow(trellis.admin, def);
    const started = await trellis.admin.envelope.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: { workflowId },
    });
    expect(started.succeeded).toBe(true);
    expect(Object.keys(started.data).sort()).toEqual(['executionId', 'startedAt', 'workflowId']);
    expect(started.data.workflowId).toBe(workflowId);
    expect(Date.parse(started.data.startedAt)).not.toBeNaN();
    const { executionId } = started.data;

    const finished = await trellis.admin.waitForExecution(workflowId, executionId);
    expect(Object.keys(finished).sort()).toEqual(
      [
        'dryRun',
        'executionEnd',
        'executionId',
        'executionStart',
        'inputs',
        'message',
        'outputs',
        'parentExecutionId',
        'parentTaskName',
        'parentWorkflowId',
        'rerunOf',
        'revision',
        'status',
        'workflow',
        'workflowId',
      ].sort(),
    );
    // A definition that declares no inputs runs with none, and one without outputs gives none.
    expect(finished.inputs).toEqual({});
    expect(finished.outputs).toEqual({});
    expect(finished.rerunOf).toBeNull();
    expect(finished.dryRun).toBe(false);
    // Not started by another execution's task (a subworkflow's would name it).
    expect(finished).toMatchObject({
      parentExecutionId: null,
      parentWorkflowId: null,
      parentTaskName: null,
    });
    // The definition text as it was when the run started.
    expect(JSON.parse(finished.workflow)).toEqual(def);
    expect(finished.executionStart).toBe(started.data.startedAt);

    const [listed] = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    expect(listed).toEqual({
      id: executionId,
      status: 'Completed',
      executionStart: finished.executionStart,
      executionEnd: finished.executionEnd,
      dryRun: false,
    });

    const tasks = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/tasks',
      {
        params: { path: { workflowId, executionId } },
      },
    );
    expect(tasks.map((task) => task.name)).toEqual(['One', 'Two']);
    for (const task of tasks) {
      expect(Object.keys(task).sort()).toEqual(
        [
          'attempts',
          'dryRun',
          'endTime',
          'id',
          'interruptedAttempts',
          'message',
          'name',
          'startTime',
          'status',
          'workflowExecutionId',
          'workflowId',
        ].sort(),
      );
      expect(task).toMatchObject({
        workflowId,
        workflowExecutionId: executionId,
        status: 'Completed',
        attempts: 1,
        interruptedAttempts: 0,
        dryRun: null,
      });
    }
    const detail = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}',
      { params: { path: { workflowId, executionId, taskExecutionId: tasks[0]!.id } } },
    );
    expect(Object.keys(detail).sort()).toEqual(
      [
        'attempts',
        'childExecutionId',
        'childWorkflowId',
        'dryRun',
        'endTime',
        'id',
        'interruptedAttempts',
        'message',
        'output',
        'startTime',
        'status',
      ].sort(),
    );
    expect(detail).toMatchObject({
      childExecutionId: null,
      childWorkflowId: null,
      attempts: 1,
      interruptedAttempts: 0,
      dryRun: null,
    });
    const [entry] = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/logs',
      {
        params: { path: { workflowId, executionId } },
      },
    );
    // The seed's fields, and beside them the task that wrote it (null: the execution's own).
    expect(Object.keys(entry!).sort()).toEqual([
      'exception',
      'id',
      'level',
      'message',
      'taskExecutionId',
      'timeStamp',
    ]);
    expect(entry).toMatchObject({ level: 'Info', exception: null, taskExecutionId: null });
  });

  it('lists newest first, filters by status and pages', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Hold', ...delay(30_000) }]),
    );
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await execute(trellis.admin, workflowId));
    const listed = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    expect(listed.map((item) => item.id)).toEqual([...ids].reverse());
    expect(listed.every((item) => item.executionEnd === null)).toBe(true);

    await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path: { workflowId, executionId: ids[0]! } },
    });
    await trellis.admin.waitForExecution(workflowId, ids[0]!);
    const canceled = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId }, query: { status: 'Canceled' } },
    });
    expect(canceled.map((item) => item.id)).toEqual([ids[0]]);
    const page = await trellis.admin.page('/workflows/{workflowId}/executions', {
      params: { path: { workflowId }, query: { page: 2, pageSize: 2 } },
    });
    expect(page.data.map((item) => item.id)).toEqual([ids[0]]);
    expect(page.pagination).toEqual({ page: 2, pageSize: 2, totalCount: 3, totalPages: 2 });
    for (const executionId of ids.slice(1)) {
      await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
        params: { path: { workflowId, executionId } },
      });
    }
    // Leave no run behind for the next test.
    for (const executionId of ids) await trellis.admin.waitForExecution(workflowId, executionId);
  });

  it('answers 400 for a body id that differs from the path and 404 for unknown ids', async () => {
    const { workflowId, executionId } = await run(trellis, definition([{ name: 'A', type: noop }]));
    // Left out, the body's id is the path's.
    const started = await trellis.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: {},
    });
    const again = await trellis.admin.waitForExecution(workflowId, started.executionId);
    expect(again).toMatchObject({ workflowId, status: 'Completed' });
    await expectFailure(
      trellis.admin.POST('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
        body: { workflowId: unknownId },
      }),
      400,
    );
    await expectFailure(
      trellis.admin.POST('/workflows/{workflowId}/executions', {
        params: { path: { workflowId: unknownId } },
        body: { workflowId: unknownId },
      }),
      404,
    );
    await expectFailure(
      trellis.admin.GET('/workflows/{workflowId}/executions', {
        params: { path: { workflowId: unknownId } },
      }),
      404,
    );
    await expectFailure(
      trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
        params: { path: { workflowId, executionId: unknownId } },
      }),
      404,
    );
    await expectFailure(
      trellis.admin.GET(
        '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}',
        {
          params: { path: { workflowId, executionId, taskExecutionId: unknownId } },
        },
      ),
      404,
    );
    const other = await run(trellis, definition([{ name: 'B', type: noop }]));
    const otherTask = (await tasksOf(trellis.admin, other.workflowId, other.executionId)).B!;
    await expectFailure(
      trellis.admin.GET(
        '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}/logs',
        {
          params: { path: { workflowId, executionId, taskExecutionId: otherTask.id } },
        },
      ),
      404,
    );
  });

  it('answers 503 and records the execution Failed with the reason when Temporal is not available', async () => {
    const workflowId = await addWorkflow(offline.admin, definition([{ name: 'A', type: noop }]));
    await expectFailure(
      offline.admin.POST('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
        body: { workflowId },
      }),
      503,
      /Temporal/,
    );
    // Never left Running with no run behind it: recorded Failed at once.
    const executions = await offline.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    expect(executions.map((execution) => execution.status)).toEqual(['Failed']);
    const logs = await offline.admin.GET('/workflows/{workflowId}/executions/{executionId}/logs', {
      params: { path: { workflowId, executionId: executions[0]!.id } },
    });
    expect(logs.map((entry) => entry.message).join('\n')).toMatch(/Temporal is unavailable/);
  });

  it('refuses a run whose definition names a plugin that is no longer installed', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Hash', type: { plugin: 'Security/Hash' }, parameters: { input: 'x' } }]),
    );
    await trellis.db.deleteFrom('plugin').where('type', '=', 'Security/Hash').execute();
    // The API process hears of the removal through PostgreSQL's notification, a moment later
    // (a start in between runs and fails in the worker instead).
    const error = await eventually(() =>
      expectFailure(
        trellis.admin.POST('/workflows/{workflowId}/executions', {
          params: { path: { workflowId } },
          body: { workflowId },
        }),
        400,
      ),
    );
    expect(error.messages.join('\n')).toMatch(/definition: .*Security\/Hash.*not installed/);
  });
});
