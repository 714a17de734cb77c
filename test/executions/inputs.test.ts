import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleId } from '#protocol/ids.js';
import { expectFailure } from '../api/api-error.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  addWorkflow,
  definition,
  eventually,
  noop,
  taskLogs,
  tasksOf,
  withTemporalClient,
  type Definition,
} from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

/** A workflow that declares inputs and logs them through an expression. */
const greeting = (): Definition =>
  definition(
    [
      {
        name: 'Greet',
        type: { plugin: 'Flow/Log' },
        parameters: {
          message: "Hello $[Inputs('who')] x$[Inputs('times')]",
          data: "$[Inputs('tags')]",
        },
        executionCondition: { expression: "Inputs('enabled')" },
      },
    ],
    {
      inputs: {
        who: { type: 'string', required: true, description: 'Whom to greet' },
        times: { type: 'integer', default: 2 },
        enabled: { type: 'boolean', default: true },
        tags: { type: 'array' },
      },
    },
  );

/** Fires a TimeBased trigger's schedule now, and waits for the one run it starts to end. */
async function fireOnce(workflowId: string, triggerId: string) {
  await withTemporalClient(trellis, (client) =>
    client.schedule.getHandle(scheduleId(triggerId)).trigger(),
  );
  const [listed] = await eventually(async () => {
    const executions = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    expect(executions).toHaveLength(1);
    return executions;
  });
  return trellis.admin.waitForExecution(workflowId, listed!.id);
}

async function executeWith(workflowId: string, inputs?: Record<string, unknown>) {
  return trellis.admin.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
    body: { workflowId, ...(inputs ? { inputs } : {}) },
  });
}

describe('inputs of a run', () => {
  it('runs with the given inputs and defaults, shows them, and expressions read them', async () => {
    const workflowId = await addWorkflow(trellis.admin, greeting());
    const { executionId } = await executeWith(workflowId, { who: 'Ada', tags: ['a'] });
    const execution = await trellis.admin.waitForExecution(workflowId, executionId);
    expect(execution.status).toBe('Completed');
    expect(execution.inputs).toEqual({ who: 'Ada', tags: ['a'], times: 2, enabled: true });
    const { Greet } = await tasksOf(trellis.admin, workflowId, executionId);
    expect(await taskLogs(trellis.admin, workflowId, executionId, Greet!.id)).toContain(
      'Hello Ada x2 ["a"]',
    );
  });

  it('rejects missing, unknown and mistyped inputs with 400 and records nothing', async () => {
    const workflowId = await addWorkflow(trellis.admin, greeting());
    const error = await expectFailure(
      executeWith(workflowId, { times: '3', extra: true, enabled: 1 }),
      400,
    );
    expect(error.messages).toEqual([
      'body.inputs.times: must be an integer, not the string "3"',
      'body.inputs.extra: is not a declared input (declared: who, times, enabled, tags)',
      'body.inputs.enabled: must be a boolean, not the number 1',
      'body.inputs.who: is required (string)',
    ]);
    const executions = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    expect(executions).toEqual([]);
  });

  it('a definition must declare what Inputs() reads, with defaults of the declared type', async () => {
    await expectFailure(
      trellis.admin.POST('/workflows/Add', {
        body: {
          definition: JSON.stringify(
            definition([{ name: 'A', type: noop, parameters: { x: "$[Inputs('nope')]" } }], {
              inputs: { n: { type: 'number', default: 'one' } },
            }),
          ),
        },
      }),
      400,
      /Inputs\('nope'\) names no declared input/,
    );
  });

  it("gives a TimeBased trigger's runs its properties.inputs, checked when it is saved", async () => {
    const workflowId = await addWorkflow(trellis.admin, greeting());
    const body = (inputs: Record<string, unknown>) => ({
      workflowId,
      type: 'TimeBased' as const,
      status: 'Active' as const,
      properties: { cron: '0 0 1 1 *', inputs },
    });
    await expectFailure(
      trellis.admin.POST('/workflows/{workflowId}/triggers', {
        params: { path: { workflowId } },
        body: body({ who: 7 }),
      }),
      400,
      'body.properties.inputs.who: must be a string, not the number 7',
    );
    const { triggerId } = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      body: body({ who: 'the schedule' }),
    });
    const execution = await fireOnce(workflowId, triggerId);
    expect(execution.status).toBe('Completed');
    expect(execution.inputs).toEqual({ who: 'the schedule', times: 2, enabled: true });
    await trellis.admin.DELETE('/workflows/{workflowId}/triggers/{triggerId}', {
      params: { path: { workflowId, triggerId } },
    });
  });

  it("records a firing Failed, saying why, when the trigger's inputs no longer fit the definition", async () => {
    const original = greeting();
    const workflowId = await addWorkflow(trellis.admin, original);
    const { triggerId } = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      body: {
        workflowId,
        type: 'TimeBased',
        status: 'Active',
        properties: { cron: '0 0 1 1 *', inputs: { who: 'the schedule' } },
      },
    });
    // The definition changes after the trigger was saved, the break accepted: `who` is a number now.
    const changed = {
      ...original,
      inputs: {
        ...(original.inputs as Record<string, unknown>),
        who: { type: 'integer', required: true },
      },
    };
    await trellis.admin.PUT('/workflows/{workflowId}', {
      params: { path: { workflowId }, query: { acceptBreaking: true } },
      body: { workflowId, definition: JSON.stringify(changed) },
    });
    const execution = await fireOnce(workflowId, triggerId);
    expect(execution).toMatchObject({
      status: 'Failed',
      message:
        'The trigger\'s inputs do not fit the definition: properties.inputs.who: must be an integer, not the string "the schedule"',
      inputs: {},
    });
    // None of its tasks is left waiting.
    expect((await tasksOf(trellis.admin, workflowId, execution.executionId)).Greet).toMatchObject({
      status: 'Canceled',
      message: `Canceled: the execution ended before it ran (${execution.message})`,
    });
    await trellis.admin.DELETE('/workflows/{workflowId}/triggers/{triggerId}', {
      params: { path: { workflowId, triggerId } },
    });
  });
});
