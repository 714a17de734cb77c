import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionWorkflowId } from '#protocol/ids.js';
import { expectFailure } from '../api/api-error.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  addWorkflow,
  definition,
  delay,
  eventually,
  execute,
  noop,
  statuses,
  taskLogs,
  tasksOf,
  type Definition,
} from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  // A small depth limit, so that the test of it needs a chain of four workflows, not twelve.
  trellis = await startTrellis({
    worker: true,
    config: { Definitions: { MaxSubworkflowDepth: 2 } },
  });
});
afterAll(async () => {
  await trellis?.stop();
});

const json = (expression: string, input?: unknown) => ({
  type: { plugin: 'Data/Json' },
  parameters: { expression, ...(input !== undefined ? { input } : {}) },
});

/** A child that doubles `count` and says hello to `who` (default "world"). */
const doubler = () =>
  definition([{ name: 'Double', ...json('count * 2', { count: "$[Inputs('count')]" }) }], {
    inputs: {
      count: { type: 'integer', required: true },
      who: { type: 'string', default: 'world' },
    },
    outputs: { doubled: "Outputs('Double').result", greeting: "$[Inputs('who')]!" },
  });

async function update(workflowId: string, def: Definition) {
  return trellis.admin.envelope.PUT('/workflows/{workflowId}', {
    params: { path: { workflowId } },
    body: { workflowId, definition: JSON.stringify(def) },
  });
}

const detail = (workflowId: string, executionId: string) =>
  trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
    params: { path: { workflowId, executionId } },
  });

const taskDetail = (workflowId: string, executionId: string, taskExecutionId: string) =>
  trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}', {
    params: { path: { workflowId, executionId, taskExecutionId } },
  });

const executionsOf = (workflowId: string) =>
  trellis.admin.GET('/workflows/{workflowId}/executions', { params: { path: { workflowId } } });

const waitFor = (workflowId: string, executionId: string, timeoutMs = 60_000) =>
  trellis.admin.waitForExecution(workflowId, executionId, { timeoutMs });

/** The one execution of a workflow, once it exists. */
async function onlyExecution(workflowId: string) {
  return eventually(async () => {
    const executions = await executionsOf(workflowId);
    expect(executions).toHaveLength(1);
    return executions[0]!;
  });
}

describe('subworkflows', () => {
  it("runs the called workflow's current revision as a child; the task's output is its outputs", async () => {
    const childId = await addWorkflow(trellis.admin, doubler());
    // Revision 2 is what the child runs: the current one when the parent's task starts.
    await update(childId, { ...doubler(), name: `${doubler().name}-v2` });
    const parentDef = definition(
      [
        { name: 'Count', ...json('21') },
        {
          name: 'Call',
          workflow: childId,
          dependencies: ['Count'],
          inputs: { count: "$[Outputs('Count').result]", who: 'Trellis' },
        },
        { name: 'After', ...json('doubled + 1', "$[Outputs('Call')]"), dependencies: ['Call'] },
      ],
      { outputs: { fromChild: "Outputs('Call').greeting", after: "Outputs('After').result" } },
    );
    const parentId = await addWorkflow(trellis.admin, parentDef);
    const parentExecutionId = await execute(trellis.admin, parentId);
    const parent = await waitFor(parentId, parentExecutionId);
    expect(parent.status).toBe('Completed');
    expect(parent.outputs).toEqual({ fromChild: 'Trellis!', after: 43 });
    expect(parent.parentExecutionId).toBeNull();
    expect(parent.parentTaskName).toBeNull();

    const tasks = await tasksOf(trellis.admin, parentId, parentExecutionId);
    const call = await taskDetail(parentId, parentExecutionId, tasks.Call!.id);
    expect(call.status).toBe('Completed');
    expect(call.output).toEqual({ doubled: 42, greeting: 'Trellis!' });
    expect(call.childWorkflowId).toBe(childId);
    const plain = await taskDetail(parentId, parentExecutionId, tasks.Count!.id);
    expect(plain.childExecutionId).toBeNull();

    // The child is an ordinary execution of its workflow, linked both ways.
    const listed = await onlyExecution(childId);
    expect(listed.id).toBe(call.childExecutionId);
    const child = await detail(childId, listed.id);
    expect(child).toMatchObject({
      status: 'Completed',
      inputs: { count: 21, who: 'Trellis' },
      outputs: { doubled: 42, greeting: 'Trellis!' },
      revision: 2,
      parentExecutionId,
      parentWorkflowId: parentId,
      parentTaskName: 'Call',
    });
    expect(await statuses(trellis.admin, childId, listed.id)).toEqual({ Double: 'Completed' });
    expect(await taskLogs(trellis.admin, parentId, parentExecutionId, tasks.Call!.id)).toEqual([
      'Started.',
      expect.stringMatching(
        new RegExp(`^Started subworkflow ".+-v2" \\(revision 2\\): execution ${listed.id}\\.$`),
      ),
      expect.stringMatching(
        /^Completed: Subworkflow ".+-v2" \(execution .+\) completed in \d+ ms\.$/,
      ),
    ]);

    // In Temporal, a child workflow of the parent's run.
    const described = await trellis.temporal.client.workflow
      .getHandle(executionWorkflowId(listed.id))
      .describe();
    expect(described.parentExecution?.workflowId).toBe(executionWorkflowId(parentExecutionId));
  });

  it('canceling the parent cancels the child, which ends Canceled; nothing stays Running', async () => {
    const childId = await addWorkflow(
      trellis.admin,
      definition([
        { name: 'Wait', ...delay(60_000) },
        { name: 'Later', type: noop, dependencies: ['Wait'] },
      ]),
    );
    const parentId = await addWorkflow(
      trellis.admin,
      definition([
        { name: 'Call', workflow: childId },
        { name: 'Next', type: noop, dependencies: ['Call'] },
      ]),
    );
    const parentExecutionId = await execute(trellis.admin, parentId);
    const childRun = await onlyExecution(childId);
    await eventually(async () => {
      expect((await statuses(trellis.admin, childId, childRun.id)).Wait).toBe('Running');
      expect((await statuses(trellis.admin, parentId, parentExecutionId)).Call).toBe('Running');
    });

    await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path: { workflowId: parentId, executionId: parentExecutionId } },
    });
    const parent = await waitFor(parentId, parentExecutionId, 30_000);
    expect(parent.status).toBe('Canceled');
    // The parent records its end only after the child's cancel completed.
    const child = await detail(childId, childRun.id);
    expect(child.status).toBe('Canceled');
    expect(child.parentExecutionId).toBe(parentExecutionId);
    expect(await statuses(trellis.admin, childId, childRun.id)).toEqual({
      Wait: 'Canceled',
      Later: 'Canceled',
    });
    expect(await statuses(trellis.admin, parentId, parentExecutionId)).toEqual({
      Call: 'Canceled',
      Next: 'Canceled',
    });
    const described = await trellis.temporal.client.workflow
      .getHandle(executionWorkflowId(childRun.id))
      .describe();
    expect(described.status.name).toBe('CANCELLED');
  });

  it("the task's timeout cancels the child; canceling the child alone fails the task", async () => {
    const childId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Wait', ...delay(60_000) }]),
    );
    const parentId = await addWorkflow(
      trellis.admin,
      definition([
        { name: 'Slow', workflow: childId, timeoutMilliseconds: 1500 },
        { name: 'Handle', type: noop, runOnFailureOf: ['Slow'] },
      ]),
    );
    const timedOutId = await execute(trellis.admin, parentId);
    expect((await waitFor(parentId, timedOutId)).status).toBe('Completed');
    const slow = (await tasksOf(trellis.admin, parentId, timedOutId)).Slow!;
    expect(slow.status).toBe('Failed');
    expect(slow.message).toMatch(
      /^Failed: Timed out after 1500 ms: Subworkflow ".+" \(execution .+\) was canceled\.$/,
    );
    const [timedOutChild] = await executionsOf(childId);
    expect(timedOutChild!.status).toBe('Canceled');

    const canceledId = await execute(trellis.admin, parentId);
    const child = await eventually(async () => {
      const runs = await executionsOf(childId);
      const running = runs.find((run) => run.id !== timedOutChild!.id);
      expect(running).toBeDefined();
      return running!;
    });
    await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path: { workflowId: childId, executionId: child.id } },
    });
    expect((await waitFor(parentId, canceledId)).status).toBe('Completed');
    expect((await tasksOf(trellis.admin, parentId, canceledId)).Slow!.message).toMatch(
      /^Failed: Subworkflow ".+" \(execution .+\) ended Canceled: Canceled by admin\.$/,
    );
  });

  it("a failing child fails the task with the child's message; a retry starts a new child", async () => {
    const childId = await addWorkflow(
      trellis.admin,
      definition([
        { name: 'Break', ...json('$error("the child broke")') },
        { name: 'Never', type: noop, dependencies: ['Break'] },
      ]),
    );
    const parentId = await addWorkflow(
      trellis.admin,
      definition([
        {
          name: 'Call',
          workflow: childId,
          errorHandling: {
            strategy: 'Retry',
            retryPolicy: { maxRetries: 1, initialDelayMilliseconds: 10 },
          },
        },
        { name: 'Next', type: noop, dependencies: ['Call'] },
      ]),
    );
    const parentExecutionId = await execute(trellis.admin, parentId);
    const parent = await waitFor(parentId, parentExecutionId);
    expect(parent.status).toBe('Failed');
    const tasks = await tasksOf(trellis.admin, parentId, parentExecutionId);
    expect(tasks.Call!.status).toBe('Failed');
    expect(tasks.Call!.message).toMatch(
      /^Failed after 2 attempts: Subworkflow ".+" \(execution .+\) ended Failed: .*the child broke/,
    );
    expect(tasks.Next!.status).toBe('Skipped');

    const children = await executionsOf(childId);
    expect(children).toHaveLength(2);
    const call = await taskDetail(parentId, parentExecutionId, tasks.Call!.id);
    expect(children.map((child) => child.id)).toContain(call.childExecutionId);
    for (const child of children) {
      expect(child.status).toBe('Failed');
      expect(await statuses(trellis.admin, childId, child.id)).toEqual({
        Break: 'Failed',
        Never: 'Skipped',
      });
    }
  });

  it('fails the task, naming the field, when the inputs do not fit the child; no child starts', async () => {
    const childId = await addWorkflow(trellis.admin, doubler());
    const parentId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Call', workflow: childId, inputs: { count: 'many', extra: 1 } }]),
    );
    const parentExecutionId = await execute(trellis.admin, parentId);
    const parent = await waitFor(parentId, parentExecutionId);
    expect(parent.status).toBe('Failed');
    const tasks = await tasksOf(trellis.admin, parentId, parentExecutionId);
    expect(tasks.Call!.message).toMatch(
      /^Failed: Workflow ".+" does not take these inputs: inputs\.count: must be an integer, not the string "many"; inputs\.extra: is not a declared input \(declared: count, who\)\.$/,
    );
    expect(await executionsOf(childId)).toEqual([]);
  });

  it('fails a task that would nest subworkflows deeper than the limit, naming the chain', async () => {
    // Depth limit 2 (this file's configuration): Top → Middle → Bottom may run, Bottom → Leaf not.
    const leaf = definition([{ name: 'Leaf', type: noop }]);
    const leafId = await addWorkflow(trellis.admin, leaf);
    const bottom = definition([{ name: 'Down', workflow: leafId }]);
    const bottomId = await addWorkflow(trellis.admin, bottom);
    const middle = definition([{ name: 'Down', workflow: bottomId }]);
    const middleId = await addWorkflow(trellis.admin, middle);
    const top = definition([{ name: 'Down', workflow: middleId }]);
    const topId = await addWorkflow(trellis.admin, top);

    const topExecutionId = await execute(trellis.admin, topId);
    expect((await waitFor(topId, topExecutionId)).status).toBe('Failed');
    const bottomRun = await onlyExecution(bottomId);
    const tasks = await tasksOf(trellis.admin, bottomId, bottomRun.id);
    expect(tasks.Down!.message).toBe(
      `Failed: Subworkflows nest deeper than 2 levels (Definitions.MaxSubworkflowDepth): ${top.name} → ${middle.name} → ${bottom.name} → ${leaf.name}.`,
    );
    expect(await executionsOf(leafId)).toEqual([]);
    // The failure travels up: each parent's task failed with its child's message.
    const middleRun = await onlyExecution(middleId);
    expect((await tasksOf(trellis.admin, middleId, middleRun.id)).Down!.message).toMatch(
      new RegExp(
        `^Failed: Subworkflow "${bottom.name}" \\(execution ${bottomRun.id}\\) ended Failed`,
      ),
    );
  });

  it('refuses a workflow that calls itself, directly or through others, naming the cycle', async () => {
    const a = definition([{ name: 'A1', type: noop }]);
    const aId = await addWorkflow(trellis.admin, a);
    const b = definition([{ name: 'B1', workflow: aId }]);
    const bId = await addWorkflow(trellis.admin, b);

    await expectFailure(
      update(aId, { ...a, tasks: [{ name: 'Self', workflow: aId }] }),
      400,
      `body.definition: tasks[0].workflow: task 'Self' calls its own workflow: ${a.name} → ${a.name}`,
    );
    await expectFailure(
      update(aId, { ...a, tasks: [{ name: 'Loop', workflow: bId }] }),
      400,
      `body.definition: tasks[0].workflow: task 'Loop' closes a cycle of workflows calling each other: ${a.name} → ${b.name} → ${a.name}`,
    );
    // Through a third workflow too; and nothing was changed by the refusals.
    const c = definition([{ name: 'C1', workflow: bId }]);
    const cId = await addWorkflow(trellis.admin, c);
    await expectFailure(
      update(aId, { ...a, tasks: [{ name: 'Loop', workflow: cId }] }),
      400,
      `${a.name} → ${c.name} → ${b.name} → ${a.name}`,
    );
    const stored = await trellis.admin.GET('/workflows/{workflowId}', {
      params: { path: { workflowId: aId } },
    });
    expect(stored.revision).toBe(1);
    expect(JSON.parse(stored.workflow)).toEqual(a);
    // Calling the same workflow twice, or a diamond of calls, is no cycle.
    await update(aId, { ...a, tasks: [{ name: 'A1', type: noop }] });
    const diamond = definition([
      { name: 'ViaB', workflow: bId },
      { name: 'ViaC', workflow: cId },
    ]);
    await addWorkflow(trellis.admin, diamond);
  });

  it('refuses unknown workflows and tasks that are neither or both kinds, with 400', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    await expectFailure(
      trellis.admin.POST('/workflows/Add', {
        body: { definition: JSON.stringify(definition([{ name: 'Call', workflow: missing }])) },
      }),
      400,
      `body.definition: tasks[0].workflow: task 'Call' calls workflow ${missing}, which does not exist`,
    );
    const childId = await addWorkflow(trellis.admin, doubler());
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'T' }, 'body.definition: tasks[0]: must have type or workflow'],
      [
        { name: 'T', type: noop, workflow: childId },
        'body.definition: tasks[0]: must have only one of type or workflow, not both',
      ],
      [{ name: 'T', workflow: 'not-a-uuid' }, 'body.definition: tasks[0].workflow: must match'],
      [
        { name: 'T', workflow: childId, parameters: { count: 1 } },
        'body.definition: tasks[0].parameters: a task with workflow takes inputs, not parameters',
      ],
      [
        { name: 'T', type: noop, inputs: { count: 1 } },
        'body.definition: tasks[0].inputs: only a task with workflow takes inputs',
      ],
      [
        { name: 'T', workflow: childId, inputs: { count: "$[Outputs('Nope')]" } },
        "body.definition: tasks[0].inputs.count: Outputs('Nope') names no task",
      ],
    ];
    for (const [task, message] of cases) {
      await expectFailure(
        trellis.admin.POST('/workflows/Add', {
          body: { definition: JSON.stringify(definition([task])) },
        }),
        400,
        message,
      );
    }
    // Keys are read case-insensitively, as everywhere in a definition.
    await addWorkflow(
      trellis.admin,
      definition([{ Name: 'T', Workflow: childId, Inputs: { count: 1 } }]),
    );
  });
});
