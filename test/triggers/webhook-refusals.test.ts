import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusalsKeptPerTrigger } from '#store/webhook-delivery-repository.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import { addWorkflow, definition } from '../support/engine-support.js';
import { signWebhook } from '../support/webhook-signing.js';

let trellis: Trellis;
let workflowId: string;

const hello = definition(
  [{ name: 'Greet', type: { plugin: 'Flow/Log' }, parameters: { message: "Hi $[Inputs('who')]" } }],
  { inputs: { who: { type: 'string', required: true } } },
);

const bodyLimit = 4096;

beforeAll(async () => {
  // No rate limit, so that one test can send more refusals than a trigger keeps.
  trellis = await startTrellis({
    config: {
      Server: { BodyLimitBytes: bodyLimit },
      Security: { RateLimits: { RequestsPerUserPerMinute: 100_000 } },
    },
  });
  workflowId = await addWorkflow(trellis.admin, hello);
});
afterAll(async () => {
  await trellis?.stop();
});

async function createTrigger(
  type: 'Webhook' | 'TimeBased',
  properties: Record<string, unknown>,
  status: 'Active' | 'DeActive' = 'Active',
) {
  const created = await trellis.admin.envelope.POST('/workflows/{workflowId}/triggers', {
    params: { path: { workflowId } },
    body: { workflowId, type, status, properties } as never,
  });
  return created.data;
}

const deliveries = (triggerId: string, query: { after?: string; pageSize?: number } = {}) =>
  trellis.admin.GET('/workflows/{workflowId}/triggers/{triggerId}/deliveries', {
    params: { path: { workflowId, triggerId }, query },
  });

interface Delivery {
  body?: string;
  contentType?: string;
  webhookId?: string | null;
  timestamp?: number;
  secret?: string;
}

/** POSTs to `/hooks/{triggerId}`, signed with `secret` when given; the answer's status and codes. */
async function deliver(triggerId: string, delivery: Delivery = {}) {
  const body = delivery.body ?? JSON.stringify({ who: 'world' });
  const webhookId = delivery.webhookId === undefined ? `msg_${randomUUID()}` : delivery.webhookId;
  const timestamp = delivery.timestamp ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    'content-type': delivery.contentType ?? 'application/json',
  };
  if (webhookId !== null) {
    headers['webhook-id'] = webhookId;
    headers['webhook-timestamp'] = String(timestamp);
    if (delivery.secret) {
      headers['webhook-signature'] = signWebhook(delivery.secret, webhookId, timestamp, body);
    }
  }
  const response = await fetch(`${trellis.baseUrl}/hooks/${triggerId}`, {
    method: 'POST',
    headers,
    body,
  });
  const answer = (await response.json()) as { errors?: { code: string }[] };
  return { status: response.status, codes: answer.errors?.map((error) => error.code) ?? [] };
}

const refusalRows = async () =>
  Number(
    (
      await trellis.db
        .selectFrom('webhookRefusal')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .executeTakeFirstOrThrow()
    ).count,
  );

const executionsOfWorkflow = () =>
  trellis.admin.GET('/workflows/{workflowId}/executions', { params: { path: { workflowId } } });

describe('Refused webhook deliveries', () => {
  it('are logged with their status, code and reason, never their body, and start nothing', async () => {
    const { triggerId, secret } = await createTrigger('Webhook', {
      signature: 'StandardWebhooks',
    });
    const marker = `marker-${randomUUID()}`;
    const hour = 3600;
    const sent: { delivery: Delivery; status: number; code: string; also?: string[] }[] = [
      {
        delivery: { secret: 'whsec_' + Buffer.alloc(32, 7).toString('base64') },
        status: 401,
        code: 'webhook.signature_invalid',
      },
      { delivery: {}, status: 401, code: 'webhook.signature_missing' },
      {
        delivery: { secret: secret!, timestamp: Math.floor(Date.now() / 1000) - hour },
        status: 401,
        code: 'webhook.stale_timestamp',
      },
      {
        delivery: { secret: secret!, body: JSON.stringify({ who: 5, note: marker }) },
        status: 400,
        code: 'validation.invalid',
        also: ['validation.unknown'],
      },
      {
        delivery: { secret: secret!, body: JSON.stringify({ who: marker.repeat(200) }) },
        status: 413,
        code: 'request.too_large',
      },
      {
        delivery: { secret: secret!, body: `who=${marker}`, contentType: 'text/plain' },
        status: 415,
        code: 'request.unsupported_media_type',
      },
      { delivery: { webhookId: null }, status: 401, code: 'webhook.signature_missing' },
    ];
    const webhookIds: (string | undefined)[] = [];
    for (const { delivery, status, code, also = [] } of sent) {
      const webhookId = delivery.webhookId === null ? null : `msg_${randomUUID()}`;
      const answer = await deliver(triggerId, { ...delivery, webhookId });
      expect({ status: answer.status, codes: answer.codes }).toEqual({
        status,
        codes: [code, ...also],
      });
      webhookIds.push(webhookId ?? undefined);
    }

    const listed = await deliveries(triggerId);
    expect(
      listed.map(({ outcome, webhookId, status, code, executionId }) => ({
        outcome,
        webhookId,
        status,
        code,
        executionId,
      })),
    ).toEqual(
      sent
        .map(({ status, code }, index) => ({
          outcome: 'Refused',
          webhookId: webhookIds[index],
          status,
          code,
          executionId: undefined,
        }))
        .reverse(),
    );
    expect(listed.find((entry) => entry.status === 400)!.reason).toMatch(/body\.who/);
    expect(listed.find((entry) => entry.status === 413)!.reason).toMatch(/4096/);
    // Neither the body nor the secret is kept.
    const stored = JSON.stringify(
      await trellis.db.selectFrom('webhookRefusal').selectAll().execute(),
    );
    expect(stored).not.toContain(marker);
    expect(stored).not.toContain(secret!.slice(6, 20));
    expect(await executionsOfWorkflow()).toEqual([]);
  });

  it('logs a paused trigger’s refusals, and nothing for an id that names no Webhook trigger', async () => {
    const paused = await createTrigger('Webhook', { signature: 'None' }, 'DeActive');
    expect(await deliver(paused.triggerId)).toEqual({ status: 404, codes: ['trigger.not_found'] });
    const [entry] = await deliveries(paused.triggerId);
    expect(entry).toMatchObject({ outcome: 'Refused', status: 404, code: 'trigger.paused' });
    expect(entry!.reason).toMatch(/paused \(DeActive\)/);

    const scheduled = await createTrigger('TimeBased', { cron: '0 6 * * *', inputs: { who: 'x' } });
    const before = await refusalRows();
    for (const id of [randomUUID(), scheduled.triggerId]) {
      expect(await deliver(id)).toEqual({ status: 404, codes: ['trigger.not_found'] });
    }
    expect(await refusalRows()).toBe(before);
  });

  it(`keeps a trigger's newest ${refusalsKeptPerTrigger} refusals, beside all its accepted deliveries`, async () => {
    const { triggerId, secret } = await createTrigger('Webhook', {
      signature: 'StandardWebhooks',
    });
    const accepted = `msg_${randomUUID()}`;
    expect((await deliver(triggerId, { secret: secret!, webhookId: accepted })).status).toBe(202);
    const refused: string[] = [];
    for (let index = 0; index < refusalsKeptPerTrigger + 5; index += 1) {
      const webhookId = `msg_refused_${String(index).padStart(3, '0')}`;
      expect((await deliver(triggerId, { webhookId })).status).toBe(401);
      refused.push(webhookId);
    }
    const listed = await deliveries(triggerId, { pageSize: 1000 });
    expect(
      listed.filter((entry) => entry.outcome === 'Refused').map((entry) => entry.webhookId),
    ).toEqual(refused.slice(5).reverse());
    expect(listed.at(-1)).toMatchObject({ outcome: 'Accepted', webhookId: accepted });

    // Paged after a refused delivery's id, the rest follows to the accepted one.
    const page = await deliveries(triggerId, { pageSize: 60 });
    const next = await deliveries(triggerId, { after: page.at(-1)!.id, pageSize: 60 });
    expect([...page, ...next].map((entry) => entry.id)).toEqual(listed.map((entry) => entry.id));
  });
});
