/**
 * One trace follows a run: the HTTP request (continuing the caller's `traceparent`), the start
 * of its Temporal workflow, the workflow, the activity, the plugin call, and the `traceparent`
 * `Net/Http` sends to the service it calls. Spans reach an OTLP/HTTP receiver this test runs,
 * as OTLP JSON, the way they reach a collector.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackAllowed, startTrellis, type Trellis } from '../support/harness.js';
import { addWorkflow, definition } from '../support/engine-support.js';

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
  serviceName: string;
}

interface Listening {
  url: string;
  server: Server;
}

async function listen(server: Server): Promise<Listening> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function close({ server }: Listening): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** A minimal OTLP/HTTP receiver: `POST /v1/traces` with an OTLP JSON body. */
async function startReceiver(): Promise<Listening & { spans: ReceivedSpan[]; paths: string[] }> {
  const spans: ReceivedSpan[] = [];
  const paths: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: {
          resource: { attributes: { key: string; value: { stringValue?: string } }[] };
          scopeSpans: { spans: Omit<ReceivedSpan, 'serviceName'>[] }[];
        }[];
      };
      for (const resourceSpans of body.resourceSpans) {
        const serviceName =
          resourceSpans.resource.attributes.find((attribute) => attribute.key === 'service.name')
            ?.value.stringValue ?? '';
        for (const scope of resourceSpans.scopeSpans) {
          for (const span of scope.spans) spans.push({ ...span, serviceName });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  return { ...(await listen(server)), spans, paths };
}

/** The service a Net/Http task calls: records each request's headers. */
async function startTarget(): Promise<Listening & { requests: IncomingHttpHeaders[] }> {
  const requests: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    requests.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  return { ...(await listen(server)), requests };
}

const callerTraceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const callerSpanId = '00f067aa0ba902b7';
const unsampledTraceId = '0af7651916cd43dd8448eb211c80319c';
const linkId = '0b6f4f8e-3c1a-4e0b-9a51-6f3f2a9c1d10';
const linkToken = `${linkId}.1900000000.SignatureThatMustNotBeTraced`;

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let target: Awaited<ReturnType<typeof startTarget>>;
let trellis: Trellis;
let runEnded: { status: string; executionId: string };

beforeAll(async () => {
  [receiver, target] = await Promise.all([startReceiver(), startTarget()]);
  trellis = await startTrellis({
    worker: true,
    config: {
      ...loopbackAllowed,
      Telemetry: { OtlpEndpoint: receiver.url, ServiceName: 'trellis-under-test' },
    },
  });
  const workflowId = await addWorkflow(
    trellis.admin,
    definition([
      {
        name: 'Call',
        type: { plugin: 'Net/Http' },
        parameters: { url: `${target.url}/orders`, method: 'GET' },
      },
    ]),
  );
  const started = await trellis.admin.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
    body: { workflowId },
    headers: { traceparent: `00-${callerTraceId}-${callerSpanId}-01` },
  });
  const done = await trellis.admin.waitForExecution(workflowId, started.executionId, {
    timeoutMs: 60_000,
  });
  runEnded = { status: done.status, executionId: started.executionId };
  expect((await fetch(`${trellis.baseUrl}/readyz`)).status).toBe(200);
  await trellis.admin.GET('/workflows/{workflowId}', { params: { path: { workflowId } } });
  // A caller that did not sample its trace: nothing of it is recorded.
  await trellis.admin.GET('/workflows', {
    headers: { traceparent: `00-${unsampledTraceId}-${callerSpanId}-00` },
  });
  // An approval link's token is a credential (this one is forged: 403 all the same).
  await fetch(`${trellis.baseUrl}/approvals/decide/${linkToken}`);
  // Stopping flushes what the batch processor still holds.
  await trellis.stop();
});
afterAll(async () => {
  await trellis?.stop();
  await Promise.all([receiver && close(receiver), target && close(target)]);
});

function only(name: string): ReceivedSpan {
  const found = receiver.spans.filter((span) => span.name === name);
  expect(found.map((span) => span.name)).toEqual([name]);
  return found[0]!;
}

describe('a traced run', () => {
  it('reaches the OTLP receiver as OTLP JSON on /v1/traces', () => {
    expect(runEnded.status).toBe('Completed');
    expect(receiver.paths.length).toBeGreaterThan(0);
    for (const path of receiver.paths) expect(path).toBe('POST /v1/traces application/json');
    expect(new Set(receiver.spans.map((span) => span.serviceName))).toEqual(
      new Set(['trellis-under-test']),
    );
  });

  it('is one trace from the HTTP request to the call the plugin makes, each span the child of the one before', () => {
    const request = only('POST /workflows/{workflowId}/executions');
    const start = only('StartWorkflow:trellisExecutionV2');
    const workflow = only('RunWorkflow:trellisExecutionV2');
    const scheduled = only('StartActivity:runTaskAttempt');
    const activity = only('RunActivity:runTaskAttempt');
    const plugin = only('plugin Net/Http');

    // The caller's trace goes on: same trace id, and the request's span is its child.
    for (const span of [request, start, workflow, scheduled, activity, plugin]) {
      expect(span.traceId).toBe(callerTraceId);
    }
    expect(request.parentSpanId).toBe(callerSpanId);
    expect(request.kind).toBe(2); // SERVER
    expect(start.parentSpanId).toBe(request.spanId);
    expect(workflow.parentSpanId).toBe(start.spanId);
    expect(scheduled.parentSpanId).toBe(workflow.spanId);
    expect(activity.parentSpanId).toBe(scheduled.spanId);
    expect(plugin.parentSpanId).toBe(activity.spanId);

    // The service Net/Http called was told the plugin call's span as its parent.
    expect(target.requests.map((headers) => headers.traceparent)).toEqual([
      `00-${callerTraceId}-${plugin.spanId}-01`,
    ]);
  });

  it('names the request by its route, never its ids, and says which operation and status', () => {
    const request = only('POST /workflows/{workflowId}/executions');
    const attributes = Object.fromEntries(
      request.attributes.map(({ key, value }) => [key, Object.values(value)[0]]),
    );
    expect(attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/workflows/{workflowId}/executions',
      'trellis.operation': 'executeWorkflow',
      'http.response.status_code': 200,
    });
    expect(attributes['trellis.request_id']).toEqual(expect.any(String));
  });

  it("shows an approval link's path without the token's signature", () => {
    const request = only('GET /approvals/decide/{token}');
    const path = request.attributes.find(({ key }) => key === 'url.path')?.value;
    expect(path).toEqual({ stringValue: `/approvals/decide/${linkId}.1900000000.…` });
    expect(JSON.stringify(receiver.spans)).not.toContain('SignatureThatMustNotBeTraced');
  });

  it('traces every API request but the probes and scrapes', () => {
    const requests = receiver.spans.filter((span) => span.kind === 2).map((span) => span.name);
    expect([...new Set(requests)].sort()).toEqual([
      'GET /approvals/decide/{token}',
      'GET /workflows/{workflowId}',
      'GET /workflows/{workflowId}/executions/{executionId}',
      // waitForExecution follows the run's event stream.
      'GET /workflows/{workflowId}/executions/{executionId}/events',
      'POST /workflows/Add',
      'POST /workflows/{workflowId}/executions',
    ]);
  });

  it('records nothing of a trace its caller did not sample', () => {
    expect(receiver.spans.filter((span) => span.traceId === unsampledTraceId)).toEqual([]);
  });

  it('records every activity of the run in its trace, and no bookkeeping for a run the API prepared', () => {
    const workflow = only('RunWorkflow:trellisExecutionV2');
    const activities = receiver.spans.filter((span) => /^(Start|Run)Activity:/.test(span.name));
    // The API prepared the run (no prepare activity) and its one attempt recorded its end.
    expect(activities.map((span) => span.name).sort()).toEqual([
      'RunActivity:runTaskAttempt',
      'StartActivity:runTaskAttempt',
    ]);
    expect(new Set(activities.map((span) => span.traceId))).toEqual(new Set([workflow.traceId]));
  });
});
