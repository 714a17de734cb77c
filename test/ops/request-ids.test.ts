/**
 * Request ids and the process log through the real server: the caller's `X-Request-Id` (or one
 * made for it) comes back on the response, is on every log line of the request and in a 5xx
 * envelope; a bad one is a 400. Runs log their start and end.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger, type Logger } from '#platform/logging.js';
import { basicAuthorization } from '../../sdk/src/index.js';
import { sendRaw } from '../api/http.js';
import { startTrellis, users, type Trellis } from '../support/harness.js';
import { addWorkflow, definition, noop, run } from '../support/engine-support.js';

type LogLine = Record<string, unknown> & { level: string; msg: string };

/** A logger whose lines (at info and above) land in `lines`, parsed. */
function capturingLogger(lines: LogLine[]): Logger {
  return createLogger(
    { Level: 'info' },
    {},
    { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  );
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const admin = basicAuthorization(users.admin.username, users.admin.password);

const lines: LogLine[] = [];
const downLines: LogLine[] = [];
let trellis: Trellis;
let temporalDown: Trellis;
beforeAll(async () => {
  [trellis, temporalDown] = await Promise.all([
    startTrellis({ worker: true, logger: capturingLogger(lines) }),
    startTrellis({ temporal: 'unreachable', logger: capturingLogger(downLines) }),
  ]);
});
afterAll(async () => {
  await Promise.all([trellis?.stop(), temporalDown?.stop()]);
});

function get(baseUrl: string, path: string, headers: Record<string, string> = {}) {
  return fetch(`${baseUrl}${path}`, { headers: { authorization: admin, ...headers } });
}

describe('X-Request-Id', () => {
  it("is the caller's when valid: echoed, and on the request's log line", async () => {
    const id = `caller-${randomUUID()}`;
    const response = await get(trellis.baseUrl, '/workflows', { 'X-Request-Id': id });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe(id);
    const mine = lines.filter((line) => line.requestId === id);
    expect(mine).toEqual([
      expect.objectContaining({
        level: 'info',
        msg: 'request',
        operationId: 'listWorkflows',
        method: 'GET',
        path: '/workflows',
        status: 200,
        user: 'admin',
      }),
    ]);
  });

  it('is made (a UUID) when the caller sends none, on every answer, errors and probes too', async () => {
    const seen = new Set<string>();
    for (const [path, status] of [
      ['/workflows', 200],
      ['/livez', 200],
      ['/no/such/route', 404],
      [`/workflows/${randomUUID()}`, 404],
    ] as const) {
      const response = await get(trellis.baseUrl, path);
      expect(response.status).toBe(status);
      const id = response.headers.get('x-request-id') ?? '';
      expect(id).toMatch(uuid);
      seen.add(id);
      expect(lines.filter((line) => line.requestId === id).map((line) => line.status)).toEqual([
        status,
      ]);
    }
    expect(seen.size).toBe(4);
  });

  it.each([
    ['spaces', 'not a valid id'],
    ['a quote', 'abc"def'],
    ['too long', 'x'.repeat(129)],
    ['two headers joined', 'a, b'],
  ])('is a 400 with a fresh id when it has %s', async (_what, given) => {
    const response = await get(trellis.baseUrl, '/workflows', { 'X-Request-Id': given });
    expect(response.status).toBe(400);
    const fresh = response.headers.get('x-request-id') ?? '';
    expect(fresh).toMatch(uuid);
    const body = (await response.json()) as { errors: { code: string; path?: string }[] };
    expect(body).toMatchObject({ data: null, succeeded: false });
    expect(body.errors).toEqual([
      expect.objectContaining({ code: 'request.invalid_request_id', path: 'header.X-Request-Id' }),
    ]);
  });

  // The contract declares this 400 on the public operations too (their only 4XX).
  it.each(['/version', '/livez', '/readyz', '/auth/oidc', '/schemas/workflow-definition.json'])(
    'is a 400 on the public %s too',
    async (path) => {
      const response = await fetch(`${trellis.baseUrl}${path}`, {
        headers: { 'X-Request-Id': 'not valid' },
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        data: null,
        succeeded: false,
        errors: [{ code: 'request.invalid_request_id' }],
      });
    },
  );

  it('is accepted at 128 characters of the allowed ones', async () => {
    const id = 'Ab0._:+/=@-'.repeat(12).slice(0, 128);
    const response = await get(trellis.baseUrl, '/workflows', { 'X-Request-Id': id });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe(id);
  });

  it('lets an anonymous caller see 401 first, whatever its header', async () => {
    const response = await fetch(`${trellis.baseUrl}/workflows`, {
      headers: { 'X-Request-Id': 'not valid' },
    });
    expect(response.status).toBe(401);
  });

  it('is in a 5xx envelope, and on every log line of that request', async () => {
    const workflowId = await addWorkflow(
      temporalDown.admin,
      definition([{ name: 'A', type: noop }]),
    );
    const id = `down-${randomUUID()}`;
    const response = await fetch(`${temporalDown.baseUrl}/workflows/${workflowId}/executions`, {
      method: 'POST',
      headers: { authorization: admin, 'content-type': 'application/json', 'X-Request-Id': id },
      body: JSON.stringify({ workflowId }),
    });
    expect(response.status).toBe(503);
    expect(response.headers.get('x-request-id')).toBe(id);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ data: null, succeeded: false, requestId: id });
    expect(Object.keys(body).sort()).toEqual([
      'data',
      'errors',
      'generatedAtUtc',
      'messages',
      'requestId',
      'succeeded',
    ]);
    // The run that could not start is logged (at warn) as part of the request, then what is
    // down (kept out of the answer), then the request.
    const mine = downLines.filter((line) => line.requestId === id);
    expect(mine.map((line) => [line.level, line.msg])).toEqual([
      ['warn', 'execution failed'],
      ['warn', 'a dependency is unavailable'],
      ['error', 'request'],
    ]);
    expect(mine[0]).toMatchObject({ workflowId, operationId: 'executeWorkflow', status: 'Failed' });
    // Every line that mentions the run carries the request id.
    const executionId = mine[0]!.executionId as string;
    const aboutTheRun = downLines.filter((line) => JSON.stringify(line).includes(executionId));
    expect(aboutTheRun.every((line) => line.requestId === id)).toBe(true);
  });

  it('is not in envelopes below 500', async () => {
    const response = await sendRaw(trellis.baseUrl, 'GET', `/workflows/${randomUUID()}`);
    expect(response.status).toBe(404);
    expect(response.body).not.toHaveProperty('requestId');
  });
});

describe('the process log of runs', () => {
  it('records each start and end with status, ids and duration; a failure at warn', async () => {
    const completed = await run(trellis, definition([{ name: 'A', type: noop }]));
    const failed = await run(
      trellis,
      definition([
        {
          name: 'Broken',
          type: { plugin: 'Data/Json' },
          parameters: { input: {}, expression: '$error("no")' },
        },
      ]),
    );
    const of = (executionId: string) => lines.filter((line) => line.executionId === executionId);
    // The worker writes a run's last line just after it commits the end the API reads, so the
    // line can come a moment after the caller sees the run end.
    await vi.waitFor(() => {
      expect(of(completed.executionId)).toHaveLength(2);
      expect(of(failed.executionId)).toHaveLength(2);
    });

    expect(of(completed.executionId).map((line) => [line.level, line.msg])).toEqual([
      ['info', 'execution started'],
      ['info', 'execution completed'],
    ]);
    const [started, ended] = of(completed.executionId);
    expect(started).toMatchObject({
      workflowId: completed.workflowId,
      temporalWorkflowId: `trellis-execution-${completed.executionId}`,
      tasks: 1,
      triggerId: null,
    });
    expect(ended).toMatchObject({
      workflowId: completed.workflowId,
      temporalWorkflowId: `trellis-execution-${completed.executionId}`,
      status: 'Completed',
      durationMs: expect.any(Number),
    });
    const took =
      Date.parse(completed.execution.executionEnd!) -
      Date.parse(completed.execution.executionStart);
    expect(ended!.durationMs).toBe(took);

    expect(of(failed.executionId).map((line) => [line.level, line.msg])).toEqual([
      ['info', 'execution started'],
      ['warn', 'execution failed'],
    ]);
    expect(of(failed.executionId)[1]).toMatchObject({
      status: 'Failed',
      message: expect.stringContaining('Broken'),
    });
  });
});
