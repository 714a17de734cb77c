import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFailure } from '../api/api-error.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import { addWorkflow, definition, delay, noop } from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

function executeAndWait(workflowId: string, waitSeconds: number, inputs?: Record<string, unknown>) {
  return trellis.admin.envelope.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId }, query: { waitSeconds } },
    body: { workflowId, ...(inputs ? { inputs } : {}) },
  });
}

describe('start and wait', () => {
  it('answers when the run ends, with its status and outputs, in one call', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Echo', type: noop, parameters: { text: "$[Inputs('text')]" } }], {
        inputs: { text: { type: 'string', required: true } },
        outputs: { echoed: "Outputs('Echo').text" },
      }),
    );
    const answer = await executeAndWait(workflowId, 30, { text: 'hi' });
    expect(answer.succeeded).toBe(true);
    expect(answer.data).toMatchObject({
      workflowId,
      status: 'Completed',
      outputs: { echoed: 'hi' },
    });
    expect(Object.keys(answer.data).sort()).toEqual(
      ['executionId', 'outputs', 'startedAt', 'status', 'workflowId'].sort(),
    );
  });

  it('answers after waitSeconds with the status of a run that goes on, without outputs', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Slow', ...delay(4000) }]),
    );
    const before = Date.now();
    const answer = await executeAndWait(workflowId, 1);
    const waited = Date.now() - before;
    expect(waited).toBeGreaterThanOrEqual(900);
    expect(waited).toBeLessThan(3500);
    expect(answer.data.status).toBe('Running');
    expect(answer.data).not.toHaveProperty('outputs');

    // 0 answers at once, with the status.
    const now = await executeAndWait(workflowId, 0);
    expect(now.data.status).toBe('Running');
  });

  it('says how a failed run ended, and refuses a wait above 60 seconds', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([
        { name: 'Broken', type: { plugin: 'Data/Json' }, parameters: { expression: 'x[' } },
      ]),
    );
    expect((await executeAndWait(workflowId, 30)).data).toMatchObject({ status: 'Failed' });
    await expectFailure(executeAndWait(workflowId, 61), 400, /waitSeconds/);
  });
});
