import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFailure } from './api-error.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import { addWorkflow, definition, noop, type Definition } from '../support/engine-support.js';

let trellis: Trellis;
beforeAll(async () => {
  trellis = await startTrellis();
});
afterAll(async () => {
  await trellis?.stop();
});

const say = { name: 'Say', type: noop };

function update(workflowId: string, next: Definition, acceptBreaking?: boolean) {
  return trellis.admin.envelope.PUT('/workflows/{workflowId}', {
    params: {
      path: { workflowId },
      ...(acceptBreaking === undefined ? {} : { query: { acceptBreaking } }),
    },
    body: { workflowId, definition: JSON.stringify(next) },
  });
}

async function revisionsOf(workflowId: string): Promise<number[]> {
  const revisions = await trellis.admin.GET('/workflows/{workflowId}/revisions', {
    params: { path: { workflowId } },
  });
  return revisions.map((revision) => revision.revision);
}

async function currentDefinition(workflowId: string): Promise<unknown> {
  const current = await trellis.admin.GET('/workflows/{workflowId}', {
    params: { path: { workflowId } },
  });
  return JSON.parse(current.workflow);
}

/** A workflow that calls `workflowId` from a task named `Charge`, giving it `inputs`. */
async function addCaller(workflowId: string, inputs: Record<string, unknown>) {
  const caller = definition([{ name: 'Charge', workflow: workflowId, inputs }]);
  await addWorkflow(trellis.admin, caller);
  return caller.name;
}

async function addScheduled(workflowId: string, inputs: Record<string, unknown>) {
  const { triggerId } = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
    params: { path: { workflowId } },
    body: {
      workflowId,
      type: 'TimeBased',
      status: 'Active',
      properties: { cron: '0 6 1 1 *', inputs },
    },
  });
  return triggerId;
}

describe('a workflow’s declared inputs and outputs checked on update', () => {
  it('refuses a breaking change with 409, naming each change and each caller it breaks, and stores nothing', async () => {
    const payment = definition([say], {
      inputs: { amount: { type: 'number', required: true }, note: { type: 'string' } },
      outputs: { total: "Inputs('amount')", note: "Inputs('note')" },
    });
    const workflowId = await addWorkflow(trellis.admin, payment);
    const caller = await addCaller(workflowId, { amount: 2.5, note: 'x' });
    const triggerId = await addScheduled(workflowId, { amount: 3 });

    const breaking = {
      ...payment,
      inputs: {
        amount: { type: 'integer', required: true },
        currency: { type: 'string', required: true },
      },
      outputs: { total: "Inputs('amount')" },
    };
    const refused = await expectFailure(update(workflowId, breaking), 409);
    const onCaller = `task 'Charge' of workflow "${caller}"`;
    expect(refused.errors).toEqual([
      {
        code: 'workflow.breaking_change',
        path: 'inputs.amount',
        message: expect.stringMatching(
          /^inputs\.amount: changes type from number to integer, so 1 known caller fails: .*acceptBreaking=true/,
        ),
      },
      {
        code: 'workflow.broken_caller',
        path: 'inputs.amount',
        message: `inputs.amount: ${onCaller} gives it 2.5`,
      },
      {
        code: 'workflow.breaking_change',
        path: 'inputs.currency',
        message: expect.stringMatching(
          /^inputs\.currency: is a new required input \(string\) without a default, so 2 known callers fail: give it a default or keep it optional/,
        ),
      },
      {
        code: 'workflow.broken_caller',
        path: 'inputs.currency',
        message: `inputs.currency: ${onCaller} does not give it`,
      },
      {
        code: 'workflow.broken_caller',
        path: 'inputs.currency',
        message: `inputs.currency: TimeBased trigger ${triggerId} does not give it`,
      },
      {
        code: 'workflow.breaking_change',
        path: 'inputs.note',
        message: expect.stringMatching(/^inputs\.note: is no longer declared, so 1 known caller/),
      },
      {
        code: 'workflow.broken_caller',
        path: 'inputs.note',
        message: `inputs.note: ${onCaller} gives it`,
      },
      {
        code: 'workflow.breaking_change',
        path: 'outputs.note',
        message: expect.stringMatching(/^outputs\.note: is no longer an output, so 1 known caller/),
      },
      {
        code: 'workflow.broken_caller',
        path: 'outputs.note',
        message: `outputs.note: ${onCaller} takes the run’s outputs as its output`,
      },
    ]);
    expect(await revisionsOf(workflowId)).toEqual([1]);
    expect(await currentDefinition(workflowId)).toEqual(payment);

    const accepted = await update(workflowId, breaking, true);
    expect(accepted.messages).toEqual([
      `Workflow "${payment.name}" was updated (revision 2).`,
      `Breaking changes accepted: inputs.amount changes type from number to integer; inputs.currency is a new required input (string) without a default; inputs.note is no longer declared; outputs.note is no longer an output (breaking ${onCaller}, TimeBased trigger ${triggerId}).`,
    ]);
    expect(await revisionsOf(workflowId)).toEqual([2, 1]);
    expect(await currentDefinition(workflowId)).toEqual(breaking);
  });

  it('refuses a breaking change that no known caller meets, since runs started through the API may', async () => {
    const payment = definition([say], { inputs: { amount: { type: 'number' } } });
    const workflowId = await addWorkflow(trellis.admin, payment);
    const required = { ...payment, inputs: { amount: { type: 'number', required: true } } };
    const refused = await expectFailure(update(workflowId, required, false), 409);
    expect(refused.errors).toEqual([
      {
        code: 'workflow.breaking_change',
        path: 'inputs.amount',
        message:
          'inputs.amount: becomes required (number), so callers that start it as they do today fail: give it a default or keep it optional, or send the update again with acceptBreaking=true to store it anyway',
      },
    ]);
    expect(await revisionsOf(workflowId)).toEqual([1]);
  });

  it('stores additive changes: an optional input, one with a default, an input made optional, a new output, a wider type', async () => {
    const payment = definition([say], {
      inputs: { amount: { type: 'integer', required: true }, note: { type: 'string' } },
      outputs: { total: "Inputs('amount')" },
    });
    const workflowId = await addWorkflow(trellis.admin, payment);
    await addCaller(workflowId, { amount: 2 });
    await addScheduled(workflowId, { amount: 3 });
    const additive = {
      ...payment,
      inputs: {
        amount: { type: 'number', description: 'in euros' },
        note: { type: 'string', default: '-' },
        currency: { type: 'string', required: true, default: 'EUR' },
        reference: { type: 'string' },
      },
      outputs: { total: "Inputs('amount')", currency: "Inputs('currency')" },
    };
    const stored = await update(workflowId, additive);
    expect(stored.messages).toEqual([`Workflow "${payment.name}" was updated (revision 2).`]);
    expect(await currentDefinition(workflowId)).toEqual(additive);
  });

  it('lets a workflow that declared no inputs declare required ones unless a known caller gives none', async () => {
    const free = definition([say]);
    const freeId = await addWorkflow(trellis.admin, free);
    const withInput = { ...free, inputs: { amount: { type: 'number', required: true } } };
    expect((await update(freeId, withInput)).messages).toEqual([
      `Workflow "${free.name}" was updated (revision 2).`,
    ]);

    const called = definition([say]);
    const calledId = await addWorkflow(trellis.admin, called);
    const caller = await addCaller(calledId, {});
    const refused = await expectFailure(
      update(calledId, { ...called, inputs: { amount: { type: 'number', required: true } } }),
      409,
    );
    expect(refused.errors.map(({ code, path, message }) => ({ code, path, message }))).toEqual([
      {
        code: 'workflow.breaking_change',
        path: 'inputs.amount',
        message: expect.stringContaining(
          'is a new required input (number) without a default, so 1 known caller fails',
        ),
      },
      {
        code: 'workflow.broken_caller',
        path: 'inputs.amount',
        message: `inputs.amount: task 'Charge' of workflow "${caller}" does not give it`,
      },
    ]);
    expect(await revisionsOf(calledId)).toEqual([1]);
  });
});
