import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFailure } from '../api/api-error.js';
import { startTrellis, users, type Trellis } from '../support/harness.js';
import { addWorkflow, definition, noop } from '../support/engine-support.js';

let trellis: Trellis;
/** A second API process on the same database. */
let other: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  other = await startTrellis({ databaseUrl: trellis.databaseUrl! });
});
afterAll(async () => {
  await other?.stop();
  await trellis?.stop();
});

let keys = 0;
const newKey = () => `key-${Date.now()}-${++keys}`;

function addWith(client: Trellis['admin'], key: string, def: object) {
  return client.envelope.POST('/workflows/Add', {
    params: { header: { 'Idempotency-Key': key } },
    body: { definition: JSON.stringify(def) },
  });
}

function executeWith(
  client: Trellis['admin'],
  key: string,
  workflowId: string,
  inputs?: Record<string, unknown>,
) {
  return client.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId }, header: { 'Idempotency-Key': key } },
    body: { workflowId, ...(inputs ? { inputs } : {}) },
  });
}

async function executionsOf(workflowId: string) {
  return trellis.admin.GET('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
  });
}

describe('Idempotency-Key', () => {
  it('adds a workflow once: a repeat gets the first response, another body 409', async () => {
    const key = newKey();
    const def = definition([{ name: 'A', type: noop }]);
    const first = await addWith(trellis.admin, key, def);
    const again = await addWith(trellis.admin, key, def);
    expect(again).toEqual(first);
    const named = (await trellis.admin.GET('/workflows')).filter((w) => w.name === def.name);
    expect(named).toHaveLength(1);

    const changed = definition([{ name: 'B', type: noop }]);
    await expectFailure(addWith(trellis.admin, key, changed), 409, /already used for a different/);
  });

  it('starts one run for repeated and concurrent executes, across API processes', async () => {
    const workflowId = await addWorkflow(trellis.admin, definition([{ name: 'A', type: noop }]));
    const key = newKey();
    const answers = await Promise.all([
      executeWith(trellis.admin, key, workflowId),
      executeWith(trellis.admin, key, workflowId),
      executeWith(other.admin, key, workflowId),
    ]);
    const ids = new Set(answers.map((answer) => answer.executionId));
    expect(ids.size).toBe(1);
    // Later, on the other process, still the same.
    expect((await executeWith(other.admin, key, workflowId)).executionId).toBe(
      answers[0].executionId,
    );
    expect(await executionsOf(workflowId)).toHaveLength(1);
  });

  it('keeps keys per user, and forgets the key of a request that failed', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'A', type: noop }], {
        inputs: { n: { type: 'integer', required: true } },
      }),
    );
    const key = newKey();
    await expectFailure(executeWith(trellis.admin, key, workflowId, { n: 'x' }), 400);
    expect(await executionsOf(workflowId)).toHaveLength(0);

    const mine = await executeWith(trellis.admin, key, workflowId, { n: 1 });
    const workflowUser = trellis.client({ basic: users.workflow });
    const theirs = await executeWith(workflowUser, key, workflowId, { n: 1 });
    expect(theirs.executionId).not.toBe(mine.executionId);
    expect(await executionsOf(workflowId)).toHaveLength(2);
  });

  it('changes nothing for requests without a key', async () => {
    const workflowId = await addWorkflow(trellis.admin, definition([{ name: 'A', type: noop }]));
    await executeWith(trellis.admin, newKey(), workflowId);
    await trellis.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: { workflowId },
    });
    await trellis.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: { workflowId },
    });
    expect(await executionsOf(workflowId)).toHaveLength(3);
  });
});
