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
