/**
 * The embedded default (`npm start` with no configuration) keeps its data in PGlite: the engine's
 * writes (data-modifying CTEs, batched transitions, idempotent upserts) must work there too, and
 * so must the event triggers and their notifications.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  addWorkflow,
  approvalsOncePaused,
  decideApproval,
  definition,
  delay,
  eventually,
  execute,
  noop,
  start,
  statuses,
  tasksOf,
} from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  // Streams (and the SDK's waits, which follow them) must be woken by notifications: they would
  // not poll within the test.
  trellis = await startTrellis({
    worker: true,
    database: 'pglite',
    config: { Server: { Events: { PollIntervalMilliseconds: 600_000 } } },
  });
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

  it('streams a run live, woken by the notifications of the embedded database', async () => {
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([
        { name: 'Wait', ...delay(500) },
        { name: 'After', type: noop, dependencies: ['Wait'] },
      ]),
    );
    const seen: string[] = [];
    const began = Date.now();
    for await (const event of trellis.admin.watchExecution(workflowId, executionId)) {
      expect(event.id).toBe(seen.length + 1);
      if (event.event === 'task') seen.push(`${event.data.name} ${event.data.status}`);
      else if (event.event === 'execution') seen.push(event.data.status);
      else seen.push(event.event);
    }
    expect(Date.now() - began).toBeLessThan(20_000);
    expect(seen[0]).toBe('Running');
    expect(seen.at(-1)).toBe('Completed');
    expect(seen).toEqual(
      expect.arrayContaining(['Wait Running', 'Wait Completed', 'After Completed']),
    );
  });

  // A delivery with a webhook-id records its execution in a transaction, which holds the embedded
  // database's only connection: nothing in it may wait for another (once, the plugin snapshot's
  // reload did, and the delivery hung until the pool gave up, 503 after 30 s).
  it('starts a run from a webhook delivery with a webhook-id, the plugin snapshot stale', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Hello', type: noop }]),
    );
    const trigger = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      body: { workflowId, type: 'Webhook', status: 'Active', properties: { signature: 'None' } },
    });
    // The API reloads its snapshot of the installed plugins once it is 2 s old.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const response = await fetch(`${trellis.baseUrl}/hooks/${trigger.triggerId}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_embedded_1',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      },
      body: '{}',
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await response.json()) as { data: { executionId: string }; messages: string[] };
    expect(response.status, body.messages.join('; ')).toBe(202);
    const { data } = body;
    const finished = await trellis.admin.waitForExecution(workflowId, data.executionId);
    expect(finished.status).toBe('Completed');
  });

  it('keeps a concurrency limit: the second run waits Pending for the slot', async () => {
    const { workflowId, executionId: first } = await start(
      trellis.admin,
      definition([{ name: 'Wait', ...delay(1000) }], {
        configuration: { concurrency: { limit: 1, onLimit: 'Queue' } },
      }),
    );
    await trellis.admin.waitForExecution(workflowId, first, { until: ['Running'] });
    const second = await execute(trellis.admin, workflowId);
    const detail = () =>
      trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
        params: { path: { workflowId, executionId: second } },
      });
    await eventually(async () =>
      expect(await detail()).toMatchObject({
        status: 'Pending',
        message: `Waiting for a concurrency slot: 1 of 1 taken by execution ${first}.`,
      }),
    );
    for (const id of [first, second]) {
      expect((await trellis.admin.waitForExecution(workflowId, id)).status).toBe('Completed');
    }
    const [a, b] = await Promise.all(
      [first, second].map(async (id) => (await tasksOf(trellis.admin, workflowId, id)).Wait!),
    );
    expect(Date.parse(a!.endTime!)).toBeLessThanOrEqual(Date.parse(b!.startTime!));
  });
});
