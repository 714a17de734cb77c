/**
 * The embedded default (`npm start` with no configuration) keeps its data in PGlite: the engine's
 * writes (data-modifying CTEs, batched transitions, idempotent upserts) must work there too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  approvalsOncePaused,
  decideApproval,
  definition,
  delay,
  noop,
  start,
  statuses,
} from './engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true, database: 'pglite' });
});
afterAll(async () => {
  await trellis?.stop();
});

describe('the engine on PGlite', () => {
  it('runs a DAG with a skip, a failure handler and an approval', async () => {
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([
        { name: 'A', type: noop },
        { name: 'Slow', ...delay(2000), dependencies: ['A'], timeoutMilliseconds: 100 },
        { name: 'Handler', type: noop, runOnFailureOf: ['Slow'] },
        { name: 'Below', type: noop, dependencies: ['Slow'] },
        { name: 'Gate', type: noop, dependencies: ['A'], manualApproval: { enabled: true } },
      ]),
    );
    const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
    await decideApproval(trellis.admin, workflowId, executionId, approval!.id, 'approve');
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
