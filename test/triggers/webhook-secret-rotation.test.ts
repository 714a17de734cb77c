import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFailure } from '../api/api-error.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import { addWorkflow, definition, eventually } from '../support/engine-support.js';
import { postSignedWebhook } from '../support/webhook-signing.js';

let trellis: Trellis;
let workflowId: string;

const hello = definition(
  [{ name: 'Greet', type: { plugin: 'Flow/Log' }, parameters: { message: "Hi $[Inputs('who')]" } }],
  { inputs: { who: { type: 'string', required: true } } },
);

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  workflowId = await addWorkflow(trellis.admin, hello);
});
afterAll(async () => {
  await trellis?.stop();
});

async function createTrigger(type: 'Webhook' | 'TimeBased', properties: Record<string, unknown>) {
  const created = await trellis.admin.envelope.POST('/workflows/{workflowId}/triggers', {
    params: { path: { workflowId } },
    body: { workflowId, type, status: 'Active', properties } as never,
  });
  return created.data;
}

const rotate = (triggerId: string) =>
  trellis.admin.envelope.POST('/workflows/{workflowId}/triggers/{triggerId}/rotate-secret', {
    params: { path: { workflowId, triggerId } },
  });

const deliveries = (triggerId: string, query: { after?: string; pageSize?: number } = {}) =>
  trellis.admin.GET('/workflows/{workflowId}/triggers/{triggerId}/deliveries', {
    params: { path: { workflowId, triggerId }, query },
  });

describe('Webhook secret rotation', () => {
  it('returns a new secret once; the old one stops verifying, the new one verifies', async () => {
    const { triggerId, secret } = await createTrigger('Webhook', { signature: 'StandardWebhooks' });
    const rotated = await rotate(triggerId);
    expect(rotated.data.triggerId).toBe(triggerId);
    expect(rotated.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.data.secret).not.toBe(secret);
    expect(rotated.messages.join(' ')).toMatch(/shown this once/);

    const shown = await trellis.admin.GET('/workflows/{workflowId}/triggers/{triggerId}', {
      params: { path: { workflowId, triggerId } },
    });
    expect(shown.properties).toEqual({ signature: 'StandardWebhooks', secret: '********' });

    expect(
      (await postSignedWebhook(trellis.baseUrl, triggerId, secret!, { who: 'a' })).status,
    ).toBe(401);
    const accepted = await postSignedWebhook(trellis.baseUrl, triggerId, rotated.data.secret, {
      who: 'b',
    });
    expect(accepted.status).toBe(202);

    // In the audit trail by its ids, never with the secret.
    const entries = await trellis.admin.GET('/audit', {
      params: { query: { operation: 'rotateWebhookSecret' } },
    });
    const entry = entries.find((each) => each.targets.triggerId === triggerId);
    expect(entry).toMatchObject({
      actor: 'admin',
      status: 200,
      targets: { workflowId, triggerId },
    });
    expect(JSON.stringify(entries)).not.toContain(rotated.data.secret);
  });

  it('refuses, changing nothing, a trigger without a secret (409) and an unknown one (404)', async () => {
    const unsigned = await createTrigger('Webhook', { signature: 'None' });
    const refused = await expectFailure(
      rotate(unsigned.triggerId),
      409,
      'has no signing secret to rotate',
    );
    expect(refused.errors.map((error) => error.code)).toEqual(['trigger.no_secret']);
    const scheduled = await createTrigger('TimeBased', {
      cron: '0 6 * * *',
      inputs: { who: 'cron' },
    });
    await expectFailure(rotate(scheduled.triggerId), 409, 'has no signing secret to rotate');
    const shown = await trellis.admin.GET('/workflows/{workflowId}/triggers/{triggerId}', {
      params: { path: { workflowId, triggerId: unsigned.triggerId } },
    });
    expect(shown.properties).toEqual({ signature: 'None' });
    await expectFailure(rotate('00000000-0000-4000-8000-000000000000'), 404);
  });
});

describe('Webhook delivery log', () => {
  it('lists accepted deliveries newest first with their execution, a page after a cursor', async () => {
    const { triggerId, secret } = await createTrigger('Webhook', { signature: 'StandardWebhooks' });
    expect(await deliveries(triggerId)).toEqual([]);
    const sent = [];
    for (const who of ['one', 'two', 'three']) {
      const delivery = await postSignedWebhook(trellis.baseUrl, triggerId, secret!, { who });
      expect(delivery.status).toBe(202);
      sent.push({ webhookId: delivery.webhookId, executionId: delivery.body.data!.executionId });
    }
    // A refused delivery starts nothing and is listed as refused, with why.
    const refused = await postSignedWebhook(trellis.baseUrl, triggerId, secret!, {});
    expect(refused.status).toBe(400);

    const listed = await eventually(async () => {
      const page = await deliveries(triggerId);
      expect(page.map((delivery) => delivery.executionStatus ?? delivery.outcome)).toEqual([
        'Refused',
        'Completed',
        'Completed',
        'Completed',
      ]);
      return page;
    });
    expect(listed[0]).toMatchObject({
      outcome: 'Refused',
      webhookId: refused.webhookId,
      status: 400,
      code: 'validation.required',
    });
    expect(listed[0]!.reason).toMatch(/who/);
    const accepted = listed.slice(1);
    expect(
      accepted.map(({ id, outcome, webhookId, executionId }) => ({
        id,
        outcome,
        webhookId,
        executionId,
      })),
    ).toEqual(
      [...sent].reverse().map((delivery) => ({
        id: delivery.webhookId,
        outcome: 'Accepted',
        ...delivery,
      })),
    );
    for (const delivery of listed) expect(Date.parse(delivery.receivedAt)).not.toBeNaN();

    const first = await deliveries(triggerId, { pageSize: 2 });
    expect(first.map((delivery) => delivery.id)).toEqual([listed[0]!.id, sent[2]!.webhookId]);
    const rest = await deliveries(triggerId, { after: first[1]!.id, pageSize: 5 });
    expect(rest.map((delivery) => delivery.id)).toEqual([sent[1]!.webhookId, sent[0]!.webhookId]);
    // A refused delivery's own id is a cursor too.
    const afterRefused = await deliveries(triggerId, { after: listed[0]!.id, pageSize: 1 });
    expect(afterRefused.map((delivery) => delivery.id)).toEqual([sent[2]!.webhookId]);

    await expectFailure(
      deliveries(triggerId, { after: 'msg_unknown' }),
      400,
      'query.after: must be the id of a delivery of this trigger',
    );
  });

  it('is only a Webhook trigger’s (409) and a known one’s (404)', async () => {
    const scheduled = await createTrigger('TimeBased', {
      cron: '0 6 * * *',
      inputs: { who: 'cron' },
    });
    const refused = await expectFailure(
      deliveries(scheduled.triggerId),
      409,
      'only a Webhook trigger receives',
    );
    expect(refused.errors.map((error) => error.code)).toEqual(['trigger.not_webhook']);
    await expectFailure(deliveries('00000000-0000-4000-8000-000000000000'), 404);
  });
});
