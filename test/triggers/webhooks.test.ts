import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFailure } from '../api/api-error.js';
import { sendRaw } from '../api/http.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import { addWorkflow, definition, eventually } from '../support/engine-support.js';
import { signWebhook } from '../support/webhook-signing.js';

let trellis: Trellis;
let workflowId: string;

// A workflow with a declared input, which each delivery's body gives.
const hello = definition(
  [
    {
      name: 'Greet',
      type: { plugin: 'Flow/Log' },
      parameters: { message: "Hello, $[Inputs('who')]!" },
    },
  ],
  { inputs: { who: { type: 'string', required: true } } },
);

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  workflowId = await addWorkflow(trellis.admin, hello);
});
afterAll(async () => {
  await trellis?.stop();
});

const sign = signWebhook;

const now = () => Math.floor(Date.now() / 1000);

interface Delivery {
  body?: string;
  webhookId?: string;
  timestamp?: number;
  signature?: string;
  secret?: string;
  authorization?: string;
}

/** POSTs to `/hooks/{triggerId}` with plain fetch, the body sent byte for byte as given. */
async function deliver(triggerId: string, delivery: Delivery = {}) {
  const body = delivery.body ?? JSON.stringify({ who: 'world' });
  const webhookId = delivery.webhookId ?? `msg_${randomUUID()}`;
  const timestamp = delivery.timestamp ?? now();
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
  };
  const signature =
    delivery.signature ??
    (delivery.secret ? sign(delivery.secret, webhookId, timestamp, body) : undefined);
  if (signature !== undefined) headers['webhook-signature'] = signature;
  if (delivery.authorization) headers.authorization = delivery.authorization;
  const response = await fetch(`${trellis.baseUrl}/hooks/${triggerId}`, {
    method: 'POST',
    headers,
    body,
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as {
      data: {
        executionId: string;
        workflowId: string;
        webhookId: string | null;
        redelivery: boolean;
      } | null;
      messages: string[];
      errors?: { code: string }[];
    },
    webhookId,
  };
}

async function createTrigger(properties: Record<string, unknown>, status = 'Active' as const) {
  return trellis.admin.POST('/workflows/{workflowId}/triggers', {
    params: { path: { workflowId } },
    body: { workflowId, type: 'Webhook', status, properties },
  });
}

async function executionIds(): Promise<string[]> {
  const executions = await trellis.admin.GET('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
  });
  return executions.map((execution) => execution.id).sort();
}

describe('Webhook triggers', () => {
  it('generates a secret once, keeps it encrypted, and never shows it again', async () => {
    const created = await trellis.admin.envelope.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      body: {
        workflowId,
        type: 'Webhook',
        status: 'Active',
        properties: { signature: 'StandardWebhooks', note: 'from the billing system' },
      },
    });
    const { triggerId, secret } = created.data;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.messages).toContain(
      'Its signing secret is in data.secret, shown this once: keep it now.',
    );

    const shown = await trellis.admin.GET('/workflows/{workflowId}/triggers/{triggerId}', {
      params: { path: { workflowId, triggerId } },
    });
    expect(shown.properties).toEqual({
      signature: 'StandardWebhooks',
      note: 'from the billing system',
      secret: '********',
    });
    const row = await trellis.db
      .selectFrom('workflowTrigger')
      .select(['properties', 'secret'])
      .where('id', '=', triggerId)
      .executeTakeFirstOrThrow();
    expect(row.properties).toEqual({
      signature: 'StandardWebhooks',
      note: 'from the billing system',
    });
    expect(row.secret).toMatch(/^enc:v2:/);
    expect(row.secret).not.toContain(secret!.slice(6));
  });

  it('starts one execution for a correctly signed delivery, with the body as its inputs', async () => {
    const { triggerId, secret } = await createTrigger({ signature: 'StandardWebhooks' });
    const before = await executionIds();
    // Signed over the bytes as sent: spacing the JSON parser would drop still counts.
    const body = '{ "who" : "webhooks" }';
    const delivered = await deliver(triggerId, { body, secret: secret! });
    expect(delivered.status).toBe(202);
    expect(delivered.body.data).toEqual({
      workflowId,
      executionId: expect.any(String),
      startedAt: expect.any(String),
      webhookId: delivered.webhookId,
      redelivery: false,
    });
    const { executionId } = delivered.body.data!;
    const ended = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 30_000,
    });
    expect(ended).toMatchObject({ status: 'Completed', inputs: { who: 'webhooks' } });
    const logs = await trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}/logs', {
      params: { path: { workflowId, executionId } },
    });
    expect(logs[0]!.message).toBe(`Execution started (1 tasks) by trigger ${triggerId}.`);
    expect(await executionIds()).toEqual([...before, executionId].sort());

    // The same delivery again (a sender's retry) starts nothing and names the first execution.
    const again = await deliver(triggerId, {
      body,
      webhookId: delivered.webhookId,
      secret: secret!,
    });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data).toMatchObject({ executionId, redelivery: true });
    expect(await executionIds()).toEqual([...before, executionId].sort());
  });

  it('starts nothing for a bad signature, a stale or future timestamp, or missing headers (401)', async () => {
    const { triggerId, secret } = await createTrigger({ signature: 'StandardWebhooks' });
    const other = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    const before = await executionIds();
    const refused = async (delivery: Delivery, code: string) => {
      const answer = await deliver(triggerId, delivery);
      expect(answer.status, JSON.stringify(answer.body)).toBe(401);
      expect(answer.body).toMatchObject({ data: null, errors: [{ code }] });
      expect(answer.headers.get('www-authenticate')).toMatch(/^StandardWebhooks/);
    };
    await refused({ secret: other }, 'webhook.signature_invalid');
    await refused({ signature: 'v1,' }, 'webhook.signature_invalid');
    await refused({ signature: 'v2,whatever' }, 'webhook.signature_invalid');
    // Signed for another body than the one sent.
    const webhookId = `msg_${randomUUID()}`;
    const timestamp = now();
    await refused(
      {
        webhookId,
        timestamp,
        signature: sign(secret!, webhookId, timestamp, JSON.stringify({ who: 'someone else' })),
      },
      'webhook.signature_invalid',
    );
    await refused({ secret: secret!, timestamp: now() - 6 * 60 }, 'webhook.stale_timestamp');
    await refused({ secret: secret!, timestamp: now() + 6 * 60 }, 'webhook.stale_timestamp');
    await refused({}, 'webhook.signature_missing');
    await refused({ secret: secret!, timestamp: Number.NaN }, 'webhook.signature_missing');
    // Credentials of a Trellis user are no signature.
    await refused(
      { authorization: `Basic ${Buffer.from('admin:admin-password').toString('base64')}` },
      'webhook.signature_missing',
    );
    expect(await executionIds()).toEqual(before);

    // Within the five minutes, a delivery signed a while ago is accepted.
    const late = await deliver(triggerId, { secret: secret!, timestamp: now() - 4 * 60 });
    expect(late.status).toBe(202);
  });

  it('answers 400 naming the field for inputs that do not fit, starting nothing and keeping the id unused', async () => {
    const { triggerId, secret } = await createTrigger({ signature: 'StandardWebhooks' });
    const before = await executionIds();
    const webhookId = `msg_${randomUUID()}`;
    const bad = await deliver(triggerId, {
      webhookId,
      secret: secret!,
      body: JSON.stringify({ who: 42, extra: true }),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.messages).toEqual([
      'body.who: must be a string, not the number 42',
      'body.extra: is not a declared input (declared: who)',
    ]);
    const notAnObject = await deliver(triggerId, { secret: secret!, body: '["world"]' });
    expect(notAnObject.status).toBe(400);
    const notJson = await deliver(triggerId, { secret: secret!, body: '{"who":' });
    expect(notJson.status).toBe(400);
    expect(await executionIds()).toEqual(before);

    // The sender fixes its payload and delivers again under the same id: it starts.
    const fixed = await deliver(triggerId, { webhookId, secret: secret! });
    expect(fixed.status).toBe(202);
    expect(fixed.body.data!.redelivery).toBe(false);
  });

  it('starts one execution for concurrent deliveries of the same webhook-id', async () => {
    const { triggerId, secret } = await createTrigger({ signature: 'StandardWebhooks' });
    const before = await executionIds();
    const webhookId = `msg_${randomUUID()}`;
    const timestamp = now();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        deliver(triggerId, { webhookId, timestamp, secret: secret! }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(202));
    const started = new Set(answers.map((answer) => answer.body.data!.executionId));
    expect(started.size).toBe(1);
    expect(answers.filter((answer) => !answer.body.data!.redelivery)).toHaveLength(1);
    expect(await executionIds()).toEqual([...before, ...started].sort());
  });

  it('answers 404 for DeActive, Manual, TimeBased and unknown triggers, 400 for a malformed id', async () => {
    const { triggerId, secret } = await createTrigger(
      { signature: 'StandardWebhooks' },
      'DeActive' as 'Active',
    );
    const manual = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      body: { workflowId, type: 'Manual', status: 'Active', properties: {} },
    });
    const timeBased = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      body: {
        workflowId,
        type: 'TimeBased',
        status: 'DeActive',
        properties: { cron: '0 0 1 1 *', inputs: { who: 'schedule' } },
      },
    });
    const before = await executionIds();
    for (const id of [triggerId, manual.triggerId, timeBased.triggerId, randomUUID()]) {
      const answer = await deliver(id, { secret: secret! });
      expect(answer.status).toBe(404);
      expect(answer.body.errors).toEqual([
        { code: 'trigger.not_found', message: expect.any(String) },
      ]);
    }
    const malformed = await sendRaw(trellis.baseUrl, 'POST', '/hooks/not-a-uuid', {
      as: null,
      body: '{}',
      contentType: 'application/json',
    });
    expect(malformed.status).toBe(400);
    // The size and media type limits of every route.
    const { triggerId: open } = await createTrigger({ signature: 'None' });
    const huge = JSON.stringify({ who: 'x'.repeat(trellis.config.Server.BodyLimitBytes) });
    for (const [body, contentType, status] of [
      [huge, 'application/json', 413],
      ['who=world', 'application/x-www-form-urlencoded', 415],
    ] as const) {
      const answer = await sendRaw(trellis.baseUrl, 'POST', `/hooks/${open}`, {
        as: null,
        body,
        contentType,
      });
      expect(answer.status).toBe(status);
    }
    expect(await executionIds()).toEqual(before);

    // Activated, the same trigger fires.
    await trellis.admin.PUT('/workflows/{workflowId}/triggers/{triggerId}', {
      params: { path: { workflowId, triggerId } },
      body: {
        workflowId,
        triggerId,
        type: 'Webhook',
        status: 'Active',
        properties: { signature: 'StandardWebhooks', secret: '********' },
      },
    });
    expect((await deliver(triggerId, { secret: secret! })).status).toBe(202);
  });

  it('needs no signature with signature None, and still starts one execution per webhook-id', async () => {
    const { triggerId, secret } = await createTrigger({ signature: 'None' });
    expect(secret).toBeUndefined();
    const first = await deliver(triggerId);
    expect(first.status).toBe(202);
    const again = await deliver(triggerId, { webhookId: first.webhookId });
    expect(again.body.data).toMatchObject({
      executionId: first.body.data!.executionId,
      redelivery: true,
    });
    // Without a webhook-id, each delivery is a new one.
    const response = await fetch(`${trellis.baseUrl}/hooks/${triggerId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ who: 'anyone' }),
    });
    expect(response.status).toBe(202);
    const body = (await response.json()) as { data: { executionId: string; webhookId: null } };
    expect(body.data.webhookId).toBeNull();
    expect(body.data.executionId).not.toBe(first.body.data!.executionId);
  });

  it('takes a secret given at creation, keeps it on update, and rotates it when a new one is given', async () => {
    const given = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    const created = await createTrigger({ signature: 'StandardWebhooks', secret: given });
    const { triggerId } = created;
    expect(created.secret).toBeUndefined();
    expect((await deliver(triggerId, { secret: given })).status).toBe(202);

    const put = (properties: Record<string, unknown>) =>
      trellis.admin.PUT('/workflows/{workflowId}/triggers/{triggerId}', {
        params: { path: { workflowId, triggerId } },
        body: { workflowId, triggerId, type: 'Webhook', status: 'Active', properties },
      });
    await put({ signature: 'StandardWebhooks', note: 'kept' });
    expect((await deliver(triggerId, { secret: given })).status).toBe(202);

    const rotated = `whsec_${Buffer.alloc(32, 10).toString('base64')}`;
    await put({ signature: 'StandardWebhooks', secret: rotated });
    expect((await deliver(triggerId, { secret: given })).status).toBe(401);
    expect((await deliver(triggerId, { secret: rotated })).status).toBe(202);

    // Signing off drops the secret; signing again needs a new one.
    await put({ signature: 'None' });
    const row = await trellis.db
      .selectFrom('workflowTrigger')
      .select('secret')
      .where('id', '=', triggerId)
      .executeTakeFirstOrThrow();
    expect(row.secret).toBeNull();
    await expectFailure(
      put({ signature: 'StandardWebhooks' }),
      400,
      'body.properties.secret: is required to sign with "StandardWebhooks"',
    );
  });

  it('refuses bad properties (400 naming them), creating nothing', async () => {
    const before = await trellis.admin.GET('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
    });
    await expectFailure(createTrigger({}), 400, 'body.properties.signature: is required');
    await expectFailure(
      createTrigger({ signature: 'Hmac' }),
      400,
      'body.properties.signature: must be one of "StandardWebhooks", "None"',
    );
    await expectFailure(
      createTrigger({ signature: 'StandardWebhooks', secret: 'hunter2' }),
      400,
      /^body\.properties\.secret: must be "whsec_"/,
    );
    await expectFailure(
      createTrigger({ signature: 'None', secret: `whsec_${Buffer.alloc(32).toString('base64')}` }),
      400,
      'body.properties.secret: is not allowed with signature "None"',
    );
    expect(
      await trellis.admin.GET('/workflows/{workflowId}/triggers', {
        params: { path: { workflowId } },
      }),
    ).toEqual(before);
  });

  it('is public while every other route still needs credentials', async () => {
    const { triggerId } = await createTrigger({ signature: 'None' });
    // Through the SDK without credentials.
    const anonymous = trellis.client();
    const started = await anonymous.POST('/hooks/{triggerId}', {
      params: { path: { triggerId } },
      body: { who: 'the SDK' },
    });
    expect(started).toMatchObject({ workflowId, redelivery: false });
    for (const path of [
      `/workflows/${workflowId}/triggers`,
      `/workflows/${workflowId}/triggers/${triggerId}`,
      `/workflows/${workflowId}`,
    ]) {
      const answer = await sendRaw(trellis.baseUrl, 'GET', path, { as: null });
      expect(answer.status, path).toBe(401);
    }
  });

  it('counts deliveries per trigger against Security.RateLimits (429 with Retry-After)', async () => {
    const { triggerId, secret } = await createTrigger({ signature: 'StandardWebhooks' });
    const limited = await startTrellis({
      databaseUrl: trellis.databaseUrl!,
      config: { Security: { RateLimits: { RequestsPerUserPerMinute: 2 } } },
    });
    try {
      const send = () =>
        fetch(`${limited.baseUrl}/hooks/${triggerId}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
      // Unsigned deliveries count too (they are refused, 401), and start nothing.
      expect((await send()).status).toBe(401);
      expect((await send()).status).toBe(401);
      const third = await send();
      expect(third.status).toBe(429);
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another trigger has its own count; another API process too.
      const other = await createTrigger({ signature: 'StandardWebhooks' });
      expect(
        (
          await fetch(`${limited.baseUrl}/hooks/${other.triggerId}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{}',
          })
        ).status,
      ).toBe(401);
      expect((await deliver(triggerId, { secret: secret! })).status).toBe(202);
    } finally {
      await limited.stop();
    }
  });

  it('lets a delivery Temporal refused (503) be retried under the same webhook-id', async () => {
    const { triggerId, secret } = await createTrigger({ signature: 'StandardWebhooks' });
    // A second API on the same database whose Temporal cannot be reached.
    const offline = await startTrellis({
      databaseUrl: trellis.databaseUrl!,
      temporal: 'unreachable',
    });
    const webhookId = `msg_${randomUUID()}`;
    const body = JSON.stringify({ who: 'retry' });
    const timestamp = now();
    const signature = sign(secret!, webhookId, timestamp, body);
    try {
      const refused = await fetch(`${offline.baseUrl}/hooks/${triggerId}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': webhookId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signature,
        },
        body,
      });
      expect(refused.status).toBe(503);
    } finally {
      await offline.stop();
    }
    // The refused start is recorded as a Failed execution; the retry starts a new one.
    const retried = await deliver(triggerId, { webhookId, timestamp, body, signature });
    expect(retried.status).toBe(202);
    expect(retried.body.data!.redelivery).toBe(false);
    const ended = await trellis.admin.waitForExecution(workflowId, retried.body.data!.executionId, {
      timeoutMs: 30_000,
    });
    expect(ended).toMatchObject({ status: 'Completed', inputs: { who: 'retry' } });
  });

  it('keeps the deliveries with their execution: a delivery record per webhook-id', async () => {
    const { triggerId, secret } = await createTrigger({ signature: 'StandardWebhooks' });
    const first = await deliver(triggerId, { secret: secret! });
    await deliver(triggerId, { secret: secret!, webhookId: first.webhookId });
    await eventually(async () => {
      const rows = await trellis.db
        .selectFrom('webhookDelivery')
        .select(['webhookId', 'executionId'])
        .where('triggerId', '=', triggerId)
        .execute();
      expect(rows).toEqual([
        { webhookId: first.webhookId, executionId: first.body.data!.executionId },
      ]);
    });
  });
});
