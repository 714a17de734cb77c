/**
 * The embedded default (`npm start` with no configuration) keeps its data in PGlite: the engine's
 * writes (data-modifying CTEs, batched transitions, idempotent upserts) must work there too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTrellis, type Trellis } from '../support/harness.js';
import { addWorkflow, definition, delay, execute, noop, statuses } from './engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true, database: 'pglite' });
});
afterAll(async () => {
  await trellis?.stop();
});

describe('the engine on PGlite', () => {
  it('runs a DAG with a skip, a failure handler and an approval', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([
        { name: 'A', type: noop },
        { name: 'Slow', ...delay(2000), dependencies: ['A'], timeoutMilliseconds: 100 },
        { name: 'Handler', type: noop, runOnFailureOf: ['Slow'] },
        { name: 'Below', type: noop, dependencies: ['Slow'] },
        { name: 'Gate', type: noop, dependencies: ['A'], manualApproval: { enabled: true } },
      ]),
    );
    const executionId = await execute(trellis.admin, workflowId);
    const path = { workflowId, executionId };
    await trellis.admin.waitForExecution(workflowId, executionId, {
      until: ['Paused'],
      timeoutMs: 20_000,
    });
    const [approval] = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/approvals',
      { params: { path } },
    );
    await trellis.admin.POST(
      '/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/approve',
      { params: { path: { ...path, approvalId: approval!.id } } },
    );
    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 20_000,
    });
    expect(finished.status).toBe('Completed');
    expect(await statuses(trellis.admin, workflowId, executionId)).toEqual({
      A: 'Completed',
      Slow: 'Failed',
      Handler: 'Completed',
      Below: 'Skipped',
      Gate: 'Completed',
    });
  });
});
