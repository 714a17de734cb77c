/**
 * Issue 27, item 11: one run's slow sandboxed tasks do not hold every sandbox of a worker. A run
 * with many Net/Http calls to an endpoint that does not answer takes at most its share
 * (`Plugins.Sandbox.MaxProcessesPerRun`), and another run's quick Data/Json task completes while
 * those calls are still held open.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAs, loopbackAllowed, startTrellis, type Trellis } from '../support/harness.js';
import { definition, eventually, start, statuses } from '../support/engine-support.js';

let trellis: Trellis;
/** Holds every request open until `answerAll`, and answers at once after `release`. */
let slow: Server;
let holding = true;
let slowUrl: string;
const held: ServerResponse[] = [];
let mostHeldAtOnce = 0;

function answerAll() {
  for (const response of held.splice(0)) response.writeHead(200).end('{"late":true}');
}

function release() {
  holding = false;
  answerAll();
}

beforeAll(async () => {
  slow = createServer((_request: IncomingMessage, response: ServerResponse) => {
    if (!holding) return void response.writeHead(200).end('{"late":false}');
    held.push(response);
    mostHeldAtOnce = Math.max(mostHeldAtOnce, held.length);
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow`;
  trellis = await startTrellis({
    worker: true,
    config: {
      ...loopbackAllowed,
      Plugins: { ...loopbackAllowed.Plugins, Sandbox: { MaxProcesses: 8 } },
    },
  });
});
afterAll(async () => {
  release();
  await trellis?.stop();
  slow?.closeAllConnections();
  await new Promise<void>((resolve) => (slow ? slow.close(() => resolve()) : resolve()));
});

describe('sandbox processes are shared between runs', () => {
  it("a run's quick task completes while another run's slow calls hold their sandboxes", async () => {
    const user = trellis.client(basicAs('workflow'));
    const calls = Array.from({ length: 12 }, (_, index) => ({
      name: `Call${index}`,
      type: { plugin: 'Net/Http' },
      parameters: { url: slowUrl, timeoutMilliseconds: 120_000 },
    }));
    const slowRun = await start(user, definition(calls));
    // The slow run takes what it may: its calls reach the server and stay there; the others wait
    // for a sandbox (a second more, so none is still on its way).
    await eventually(async () => expect(held.length).toBeGreaterThanOrEqual(4));
    await new Promise((resolve) => setTimeout(resolve, 1000));

    const other = trellis.client(basicAs('admin'));
    const quickRun = await start(
      other,
      definition([
        {
          name: 'Quick',
          type: { plugin: 'Data/Json' },
          parameters: { expression: '$sum(values)', input: { values: [1, 2, 3] } },
        },
      ]),
    );
    const quick = await other.waitForExecution(quickRun.workflowId, quickRun.executionId, {
      timeoutMs: 30_000,
    });
    expect(quick.status).toBe('Completed');
    // The quick run did not wait for a slow call to end: all are still held open.
    expect(held.length).toBe(4);
    const slowStatuses = await statuses(user, slowRun.workflowId, slowRun.executionId);
    expect(Object.values(slowStatuses).filter((status) => status === 'Running').length).toBe(12);
    // The slow run never held more than its share of the 8 sandboxes (default: half).
    expect(mostHeldAtOnce).toBe(4);

    // Answered, every call of the slow run completes, those that waited for a sandbox too.
    release();
    const done = await user.waitForExecution(slowRun.workflowId, slowRun.executionId, {
      timeoutMs: 60_000,
    });
    expect(done.status).toBe('Completed');
  });
});
