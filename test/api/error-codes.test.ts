import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFailure } from './api-error.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import { addWorkflow, definition, noop, run } from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

describe('error envelopes carry stable codes', () => {
  it('codes input problems with the place, beside the unchanged messages', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'A', type: noop }], {
        inputs: { region: { type: 'string', required: true } },
      }),
    );
    const error = await expectFailure(
      trellis.admin.POST('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
        body: { workflowId, inputs: { extra: 1 } },
      }),
      400,
    );
    expect(error.errors).toEqual([
      {
        code: 'validation.unknown',
        message: 'body.inputs.extra: is not a declared input (declared: region)',
        path: 'body.inputs.extra',
      },
      {
        code: 'validation.required',
        message: 'body.inputs.region: is required (string)',
        path: 'body.inputs.region',
      },
    ]);
    const mismatch = await expectFailure(
      trellis.admin.POST('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
        body: { workflowId: randomUUID() },
      }),
      400,
    );
    expect(mismatch.errors[0]).toMatchObject({
      code: 'validation.id_mismatch',
      path: 'body.workflowId',
    });
  });

  it('suggests the plugin, task or input a misspelled name may have meant, in words and as data', async () => {
    const plugin = await expectFailure(
      trellis.admin.POST('/workflows/Add', {
        body: {
          definition: {
            name: 'misspelled-plugin',
            tasks: [{ name: 'Say', type: { plugin: 'Flow/Lgo' as 'Flow/Log' } }],
          },
        },
      }),
      400,
    );
    expect(plugin.errors).toEqual([
      {
        code: 'validation.invalid',
        message:
          "body.definition: tasks[0].type: task 'Say' uses plugin 'Flow/Lgo', which is not installed (did you mean 'Flow/Log'?)",
        path: 'body.definition',
        suggestions: ['Flow/Log'],
      },
    ]);

    const dependency = await expectFailure(
      trellis.admin.POST('/workflows/Add', {
        body: {
          definition: JSON.stringify({
            name: 'misspelled-dependency',
            tasks: [
              { name: 'Fetch', type: { plugin: 'Flow/NoOp' } },
              { name: 'Parse', type: { plugin: 'Flow/NoOp' }, dependencies: ['Fecth'] },
            ],
          }),
        },
      }),
      400,
    );
    expect(dependency.errors).toEqual([
      {
        code: 'validation.invalid',
        message:
          "body.definition: tasks[1].dependencies[0]: unknown task 'Fecth' (did you mean 'Fetch'?)",
        path: 'body.definition',
        suggestions: ['Fetch'],
      },
    ]);

    const workflowId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'A', type: noop }], {
        inputs: { region: { type: 'string', required: true } },
      }),
    );
    const input = await expectFailure(
      trellis.admin.POST('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
        body: { inputs: { regoin: 'eu', region: 'eu' } },
      }),
      400,
    );
    expect(input.errors).toEqual([
      {
        code: 'validation.unknown',
        message:
          "body.inputs.regoin: is not a declared input (declared: region) (did you mean 'region'?)",
        path: 'body.inputs.regoin',
        suggestions: ['region'],
      },
    ]);
  });

  it('names what was not found, what is not running, and who is not allowed', async () => {
    const missing = randomUUID();
    const notFound = await expectFailure(
      trellis.admin.GET('/workflows/{workflowId}', { params: { path: { workflowId: missing } } }),
      404,
    );
    expect(notFound.codes).toEqual(['workflow.not_found']);

    const { workflowId, executionId } = await run(trellis, definition([{ name: 'A', type: noop }]));
    const notRunning = await expectFailure(
      trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
        params: { path: { workflowId, executionId } },
      }),
      409,
    );
    expect(notRunning.codes).toEqual(['execution.not_running']);
    const noExecution = await expectFailure(
      trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
        params: { path: { workflowId, executionId: missing } },
      }),
      404,
    );
    expect(noExecution.codes).toEqual(['execution.not_found']);

    const anonymous = await expectFailure(trellis.client().GET('/workflows'), 401);
    expect(anonymous.codes).toEqual(['auth.unauthenticated']);
    const noRoute = await expectFailure(trellis.admin.GET('/nowhere' as '/workflows'), 404);
    expect(noRoute.codes).toEqual(['route.not_found']);
  });
});
