/**
 * Notifications through the real stack: a receiver started here gets signed events (checked with
 * the Standard Webhooks library), a failing one is retried and every attempt is in the delivery
 * log, and the approval link in the event decides its approval once.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '#platform/logging.js';
import { approvalLinkToken } from '#application/notifications/approval-links.js';
import type { NotificationPayload } from '#protocol/notifications.js';
import { expectFailure } from '../api/api-error.js';
import { approvalsOncePaused, definition, eventually, start } from '../support/engine-support.js';
import { basicAs, startTrellis, type Trellis } from '../support/harness.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  event: NotificationPayload;
}

const secret = `whsec_${randomBytes(24).toString('base64')}`;
/** Every request the receiver got, and those it answered 2xx. */
const requests: Received[] = [];
const delivered: Received[] = [];
/** How many requests of each event id the receiver refuses before it accepts one. */
let failFirst = 2;
const refused = new Map<string, number>();
let receiver: http.Server;
let trellis: Trellis;
/** Every line the service logged, as written. */
const logLines: string[] = [];

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const received = {
        headers: req.headers,
        body,
        event: JSON.parse(body) as NotificationPayload,
      };
      requests.push(received);
      if (req.url === '/always-failing') {
        res.writeHead(503).end('down');
        return;
      }
      const id = String(req.headers['webhook-id']);
      const count = refused.get(id) ?? 0;
      if (count < failFirst) {
        refused.set(id, count + 1);
        res.writeHead(500).end('not now');
        return;
      }
      delivered.push(received);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const url = `${origin}/hooks/trellis`;
  trellis = await startTrellis({
    worker: true,
    config: {
      Notifications: {
        Webhooks: [
          {
            Url: url,
            Events: ['ApprovalRequested', 'ExecutionCompleted', 'ExecutionFailed'],
            Secret: secret,
          },
          { Url: `${origin}/always-failing`, Events: ['ExecutionFailed'], Secret: secret },
        ],
        PublicUrl: 'https://trellis.example.test/',
        MaxAttempts: 3,
      },
    },
    logger: createLogger({ Level: 'debug' }, {}, { write: (line: string) => logLines.push(line) }),
  });
});
afterAll(async () => {
  await trellis?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

const gated = () =>
  definition([
    {
      name: 'Gate',
      type: { plugin: 'Flow/Log' },
      parameters: { message: 'Paying $[Approval().inputs.amount]', level: 'Info' },
      manualApproval: {
        enabled: true,
        comment: 'How much?',
        inputs: { amount: { type: 'integer', required: true } },
      },
    },
  ]);

/** The token in an approval link. */
const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);

describe('notifications', () => {
  it('delivers a signed approval-requested event after two failures, logging every attempt', async () => {
    const { workflowId, executionId } = await start(trellis.admin, gated());
    const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
    const received = await eventually(async () => {
      const found = delivered.find((item) => item.event.data.approval?.id === approval!.id);
      expect(found).toBeDefined();
      return found!;
    }, 30_000);
    // Signed as Standard Webhooks says; the library verifies and parses it.
    const verified = new Webhook(secret).verify(received.body, {
      'webhook-id': String(received.headers['webhook-id']),
      'webhook-timestamp': String(received.headers['webhook-timestamp']),
      'webhook-signature': String(received.headers['webhook-signature']),
    });
    expect(verified).toEqual(received.event);
    expect(() =>
      new Webhook(`whsec_${randomBytes(24).toString('base64')}`).verify(received.body, {
        'webhook-id': String(received.headers['webhook-id']),
        'webhook-timestamp': String(received.headers['webhook-timestamp']),
        'webhook-signature': String(received.headers['webhook-signature']),
      }),
    ).toThrow();
    const eventId = String(received.headers['webhook-id']);
    expect(received.event).toMatchObject({
      type: 'ApprovalRequested',
      id: eventId,
      data: {
        workflowId,
        executionId,
        status: 'Paused',
        approval: {
          id: approval!.id,
          taskName: 'Gate',
          comment: 'How much?',
          form: { amount: { type: 'integer', required: true } },
        },
      },
    });
    expect(received.event.data.approval!.link.url).toMatch(
      /^https:\/\/trellis\.example\.test\/approvals\/decide\/[^/]+$/,
    );
    // The same event three times: the same id and body on every attempt.
    const attempts = requests.filter((item) => item.headers['webhook-id'] === eventId);
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((item) => item.body)).size).toBe(1);

    const log = await trellis.admin.GET('/notifications/deliveries', {
      params: { query: { eventId } },
    });
    expect(
      log.map(({ attempt, outcome, statusCode }) => ({ attempt, outcome, statusCode })),
    ).toEqual([
      { attempt: 3, outcome: 'Delivered', statusCode: 204 },
      { attempt: 2, outcome: 'Failed', statusCode: 500 },
      { attempt: 1, outcome: 'Failed', statusCode: 500 },
    ]);
    expect(log[1]).toMatchObject({
      event: 'ApprovalRequested',
      executionId,
      approvalId: approval!.id,
      error: 'The receiver answered 500.',
    });
    await expectFailure(
      trellis.client(basicAs('workflow')).GET('/notifications/deliveries', {}),
      403,
    );
    const paged = await trellis.admin.GET('/notifications/deliveries', {
      params: { query: { executionId, page: 1, pageSize: 2 } },
    });
    expect(paged).toHaveLength(2);
    // Read on after the last attempt read: the rest, newest first, with no count.
    const [newest, second, first] = log;
    const after = await trellis.admin.envelope.GET('/notifications/deliveries', {
      params: { query: { eventId, after: newest!.id, pageSize: 1 } },
    });
    expect(after.data.map(({ id }) => id)).toEqual([second!.id]);
    expect(after.pagination).toBeUndefined();
    const rest = await trellis.admin.GET('/notifications/deliveries', {
      params: { query: { eventId, after: second!.id } },
    });
    expect(rest.map(({ id }) => id)).toEqual([first!.id]);
    await expect(
      trellis.admin.GET('/notifications/deliveries', {
        params: { query: { eventId, after: first!.id } },
      }),
    ).resolves.toEqual([]);
    // A cursor that is not an attempt of the list is refused, as is one with a page number.
    await expectFailure(
      trellis.admin.GET('/notifications/deliveries', {
        params: { query: { executionId: workflowId, after: newest!.id } },
      }),
      400,
      'query.after',
    );
    await expectFailure(
      trellis.admin.GET('/notifications/deliveries', {
        params: { query: { after: newest!.id, page: 1 } },
      }),
      400,
      'query.after',
    );
  });

  it('decides through the link once; forged and used links are refused', async () => {
    failFirst = 0;
    const { workflowId, executionId } = await start(trellis.admin, gated());
    const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
    const received = await eventually(async () => {
      const found = delivered.find((item) => item.event.data.approval?.id === approval!.id);
      expect(found).toBeDefined();
      return found!;
    }, 30_000);
    const token = tokenOf(received.event.data.approval!.link.url);
    const anonymous = trellis.client();
    const path = { params: { path: { token } } };

    const view = await anonymous.GET('/approvals/decide/{token}', path);
    expect(view).toMatchObject({
      approvalId: approval!.id,
      workflowId,
      executionId,
      taskName: 'Gate',
      status: 'Pending',
      form: { amount: { type: 'integer', required: true } },
    });
    // A browser is sent to the console's decision page.
    const page = await fetch(`${trellis.baseUrl}/approvals/decide/${token}`, {
      headers: { accept: 'text/html' },
      redirect: 'manual',
    });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe(`/ui/decide/${token}`);

    const forged = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    await expectFailure(
      anonymous.GET('/approvals/decide/{token}', { params: { path: { token: forged } } }),
      403,
      'This approval link is not valid',
    );
    await expectFailure(
      anonymous.GET('/approvals/decide/{token}', { params: { path: { token: 'nonsense' } } }),
      403,
    );
    // Bad inputs: 400, nothing decided, the link still works.
    await expectFailure(
      anonymous.POST('/approvals/decide/{token}', {
        ...path,
        body: { decision: 'Approve', inputs: { amount: 'ten' } },
      }),
      400,
      'body.inputs.amount: must be an integer',
    );
    await anonymous.POST('/approvals/decide/{token}', {
      ...path,
      body: { decision: 'Approve', reason: 'from my phone', inputs: { amount: 10 } },
    });
    await expectFailure(
      anonymous.POST('/approvals/decide/{token}', { ...path, body: { decision: 'Reject' } }),
      410,
      'was used already',
    );
    await expectFailure(anonymous.GET('/approvals/decide/{token}', path), 410);

    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 30_000,
    });
    expect(finished.status).toBe('Completed');
    const [decided] = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/approvals',
      { params: { path: { workflowId, executionId } } },
    );
    expect(decided).toMatchObject({
      status: 'Approved',
      decidedBy: 'approval link',
      decidedVia: 'Link',
      decidedViaNotification: received.event.id,
      reason: 'from my phone',
      inputs: { amount: 10 },
    });
    // The token is a credential: logs show which link was used, never its signature, however
    // its path was written (the console's page for it, percent-encoded dots).
    for (const url of [
      `/ui/decide/${token}`,
      `/approvals/decide/${token.replaceAll('.', '%2E')}`,
    ]) {
      await (await fetch(`${trellis.baseUrl}${url}`, { headers: { accept: 'text/html' } })).text();
    }
    const [linkId, expires, signature] = token.split('.');
    const requestPaths = logLines
      .map((line) => JSON.parse(line) as { msg: string; path?: string })
      .filter((line) => line.msg === 'request' && line.path?.includes('/decide/'))
      .map((line) => line.path);
    expect(requestPaths).toContain(`/approvals/decide/${linkId}.${expires}.…`);
    expect(requestPaths).toContain(`/ui/decide/${linkId}.${expires}.…`);
    expect(requestPaths.length).toBeGreaterThanOrEqual(8);
    expect(logLines.filter((line) => line.includes(signature!))).toEqual([]);

    // The run's end is told too.
    await eventually(async () => {
      expect(
        delivered.some(
          (item) =>
            item.event.type === 'ExecutionCompleted' && item.event.data.executionId === executionId,
        ),
      ).toBe(true);
    }, 30_000);
  });

  it('refuses an expired link; tells of the failed run, giving up on a webhook that keeps failing', async () => {
    const { workflowId, executionId } = await start(trellis.admin, gated());
    const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
    const { token } = await approvalLinkToken(trellis.db, {
      eventId: `msg_expired_${approval!.id}`,
      approvalId: approval!.id,
      expiresAt: new Date(Date.now() - 1000),
    });
    const anonymous = trellis.client();
    await expectFailure(
      anonymous.GET('/approvals/decide/{token}', { params: { path: { token } } }),
      410,
      'This approval link has expired.',
    );
    await expectFailure(
      anonymous.POST('/approvals/decide/{token}', {
        params: { path: { token } },
        body: { decision: 'Approve', inputs: { amount: 1 } },
      }),
      410,
    );
    const [still] = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/approvals',
      { params: { path: { workflowId, executionId } } },
    );
    expect(still).toMatchObject({ status: 'Pending' });
    // Rejected: the run fails, and both webhooks are told; the one that keeps failing is given
    // up after MaxAttempts, each attempt in the log.
    await trellis.admin.POST(
      '/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/reject',
      {
        params: { path: { workflowId, executionId, approvalId: approval!.id } },
        body: { reason: 'No.' },
      },
    );
    await eventually(async () => {
      const failed = delivered.find(
        (item) =>
          item.event.type === 'ExecutionFailed' && item.event.data.executionId === executionId,
      );
      expect(failed?.event.data).toMatchObject({ status: 'Failed' });
    }, 30_000);
    const attempts = await eventually(async () => {
      const log = await trellis.admin.GET('/notifications/deliveries', {
        params: { query: { executionId } },
      });
      const failing = log.filter((row) => row.url.endsWith('/always-failing'));
      expect(failing.map((row) => row.outcome)).toEqual(['Abandoned', 'Failed', 'Failed']);
      return failing;
    }, 30_000);
    expect(attempts.map((row) => [row.event, row.attempt, row.statusCode])).toEqual([
      ['ExecutionFailed', 3, 503],
      ['ExecutionFailed', 2, 503],
      ['ExecutionFailed', 1, 503],
    ]);
  });
});
