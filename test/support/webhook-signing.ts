import { createHmac, randomUUID } from 'node:crypto';

/**
 * A Standard Webhooks signature made here, from the specification rather than with the library
 * the server uses: base64 of HMAC-SHA256, keyed by the secret's base64-decoded bytes, over
 * `<webhook-id>.<webhook-timestamp>.<body>`.
 */
export function signWebhook(
  secret: string,
  webhookId: string,
  timestamp: number,
  body: string,
): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const mac = createHmac('sha256', key).update(`${webhookId}.${timestamp}.${body}`).digest();
  return `v1,${mac.toString('base64')}`;
}

/** POSTs a delivery signed with `secret` to `/hooks/{triggerId}`; the response's status and body. */
export async function postSignedWebhook(
  baseUrl: string,
  triggerId: string,
  secret: string,
  inputs: Record<string, unknown>,
  webhookId = `msg_${randomUUID()}`,
): Promise<{ status: number; body: { data: { executionId: string } | null }; webhookId: string }> {
  const body = JSON.stringify(inputs);
  const timestamp = Math.floor(Date.now() / 1000);
  const response = await fetch(`${baseUrl}/hooks/${triggerId}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': webhookId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(secret, webhookId, timestamp, body),
    },
    body,
  });
  return {
    status: response.status,
    body: (await response.json()) as { data: { executionId: string } | null },
    webhookId,
  };
}
