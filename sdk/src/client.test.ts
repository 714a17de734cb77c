import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import {
  createClient,
  createTrellisClient,
  defineWorkflow,
  TrellisApiError,
  type BuiltInPluginParameters,
  type components,
  type WorkflowDefinition,
} from './index.js';

// A real HTTP server on loopback that answers as Trellis would, recording what it received.
// An event stream is answered with its text, then ended (or `open`: left open, heartbeating).
type Reply = { status: number; body: unknown } | { sse: string; open?: boolean };
type Received = {
  method: string;
  url: string;
  authorization: string | undefined;
  lastEventId: string | undefined;
  project: string | undefined;
  body: unknown;
};

let server: Server;
let baseUrl: string;
let received: Received[] = [];
let answer: (request: Received) => Reply = () => ({ status: 200, body: envelope({}) });

const envelope = (data: unknown, extra: Record<string, unknown> = {}) => ({
  data,
  messages: [],
  succeeded: true,
  generatedAtUtc: new Date().toISOString(),
  ...extra,
});
const failure = (messages: string[]) => ({
  data: null,
  messages,
  succeeded: false,
  generatedAtUtc: new Date().toISOString(),
});

async function readBody(request: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  return text ? JSON.parse(text) : undefined;
}

beforeAll(async () => {
  server = createServer((request, response) => {
    void readBody(request).then((body) => {
      const entry = {
        method: request.method ?? '',
        url: request.url ?? '',
        authorization: request.headers.authorization,
        lastEventId: request.headers['last-event-id'] as string | undefined,
        project: request.headers['x-trellis-project'] as string | undefined,
        body,
      };
      received.push(entry);
      const answered = answer(entry);
      if ('sse' in answered) {
        response.writeHead(200, { 'content-type': 'text/event-stream' }).write(answered.sse);
        if (!answered.open) return response.end();
        const heartbeat = setInterval(() => response.write(': heartbeat\n\n'), 10);
        response.once('close', () => clearInterval(heartbeat));
        return;
      }
      response
        .writeHead(answered.status, { 'content-type': 'application/json' })
        .end(JSON.stringify(answered.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  received = [];
  answer = () => ({ status: 200, body: envelope({}) });
});

const workflowId = '0b6c1d7e-3f1a-4c2b-9d4e-5f6a7b8c9d0e';
const executionId = '1c7d2e8f-4a2b-4d3c-8e5f-6a7b8c9d0e1f';

describe('createTrellisClient', () => {
  it('sends Basic credentials and resolves to the envelope data', async () => {
    const item = { id: workflowId, name: 'Nightly', modifiedDate: '2025-01-01T00:00:00Z' };
    answer = () => ({ status: 200, body: envelope([item]) });
    const client = createTrellisClient({
      baseUrl,
      basic: { username: 'admin', password: 'pä:ss' },
    });

    const workflows = await client.GET('/workflows');

    expectTypeOf(workflows).toEqualTypeOf<components['schemas']['WorkflowListItem'][]>();
    expect(workflows).toEqual([item]);
    expect(received[0]?.authorization).toBe(
      `Basic ${Buffer.from('admin:pä:ss').toString('base64')}`,
    );
  });

  it('asks the bearer function for a token on every request', async () => {
    let issued = 0;
    const client = createTrellisClient({ baseUrl, bearer: () => `token-${++issued}` });

    await client.GET('/version');
    await client.GET('/version');

    expect(received.map((entry) => entry.authorization)).toEqual([
      'Bearer token-1',
      'Bearer token-2',
    ]);
  });

  it('names its project on every request, event streams included, and none by default', async () => {
    answer = (entry) =>
      entry.url.endsWith('/events')
        ? { sse: sse(status(1, 'Completed')) }
        : { status: 200, body: envelope({}) };
    const inProject = createClient({ baseUrl, project: 'partner-a' });
    await inProject.GET('/workflows');
    for await (const event of inProject.watchExecution(workflowId, executionId)) void event;
    await createTrellisClient({ baseUrl }).GET('/workflows');

    expect(received.map((entry) => entry.project)).toEqual(['partner-a', 'partner-a', undefined]);
  });

  it('refuses both Basic and Bearer credentials', () => {
    expect(() =>
      createTrellisClient({ baseUrl, basic: { username: 'a', password: 'b' }, bearer: 't' }),
    ).toThrow(TypeError);
  });

  it('sends path parameters and bodies, including the body of DELETE /plugins', async () => {
    const client = createTrellisClient({ baseUrl });

    await client.PUT('/workflows/{workflowId}', {
      params: { path: { workflowId } },
      body: { workflowId, definition: '{"name":"A","tasks":[]}' },
    });
    await client.DELETE('/plugins', { body: { Type: 'Net/Http', Version: '1.0.0' } });

    expect(received).toMatchObject([
      {
        method: 'PUT',
        url: `/workflows/${workflowId}`,
        body: { workflowId, definition: '{"name":"A","tasks":[]}' },
      },
      { method: 'DELETE', url: '/plugins', body: { Type: 'Net/Http', Version: '1.0.0' } },
    ]);
  });

  it('sends a definition as given: an object as the object, text as the text', async () => {
    const client = createTrellisClient({ baseUrl });
    const definition: WorkflowDefinition = {
      name: 'Sum',
      tasks: [
        {
          name: 'Sum',
          type: { plugin: 'Data/Json' },
          parameters: { input: [1, 2], expression: '$sum($)' },
        },
      ],
    };

    await client.POST('/workflows/Add', { body: { definition } });
    await client.POST('/workflows', { body: { definition: JSON.stringify(definition) } });
    await client.PUT('/workflows/{workflowId}', {
      params: { path: { workflowId } },
      body: { workflowId, definition },
    });

    expect(received.map((entry) => entry.body)).toEqual([
      { definition },
      { definition: JSON.stringify(definition) },
      { workflowId, definition },
    ]);
  });

  it('throws TrellisApiError with the status, messages and body of an error envelope', async () => {
    const body = failure(['definition: tasks must have at least one item']);
    answer = () => ({ status: 400, body });
    const client = createTrellisClient({ baseUrl });

    const error = await client
      .POST('/workflows/Add', { body: { definition: '{}' } })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(TrellisApiError);
    expect(error).toMatchObject({ status: 400, messages: body.messages, body });
  });

  it('resolves envelope calls to the whole body, messages included', async () => {
    answer = () => ({ status: 200, body: { ...envelope({}), messages: ['Workflow deleted'] } });
    const client = createTrellisClient({ baseUrl });

    const result = await client.envelope.DELETE('/workflows/{workflowId}', {
      params: { path: { workflowId } },
    });

    expect(result.messages).toEqual(['Workflow deleted']);
  });

  it('pages through a list', async () => {
    const ids = ['a', 'b', 'c', 'd', 'e'];
    answer = ({ url }) => {
      const query = new URL(url, baseUrl).searchParams;
      const page = Number(query.get('page'));
      const pageSize = Number(query.get('pageSize') ?? 100);
      const data = ids.slice((page - 1) * pageSize, page * pageSize).map((id) => ({ id }));
      const pagination = {
        page,
        pageSize,
        totalCount: ids.length,
        totalPages: Math.ceil(ids.length / pageSize),
      };
      return { status: 200, body: envelope(data, { pagination }) };
    };
    const client = createTrellisClient({ baseUrl });

    const first = await client.page('/config', { params: { query: { pageSize: 2 } } });
    const every = [];
    for await (const item of client.all('/config', { params: { query: { pageSize: 2 } } }))
      every.push(item.id);

    expect(first.pagination).toEqual({ page: 1, pageSize: 2, totalCount: 5, totalPages: 3 });
    expect(first.data.map((item) => item.id)).toEqual(['a', 'b']);
    expect(every).toEqual(ids);
    expect(received.slice(1).map((entry) => entry.url)).toEqual([
      '/config?pageSize=2&page=1',
      '/config?pageSize=2&page=2',
      '/config?pageSize=2&page=3',
    ]);
  });
});

/** Event stream messages as the server writes them. */
const sse = (...events: { id: number; event: string; data: object }[]) =>
  events
    .map(({ id, event, data }) => `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    .join('');
const at = '2025-01-01T00:00:00.000Z';
const status = (id: number, value: string) => ({
  id,
  event: 'execution',
  data: { status: value, message: '', at },
});
const task = (id: number, value: string) => ({
  id,
  event: 'task',
  data: { taskExecutionId: executionId, name: 'A', status: value, message: '', at },
});
const eventsPath = `/workflows/${workflowId}/executions/${executionId}/events`;
const detailPath = `/workflows/${workflowId}/executions/${executionId}`;

describe('watchExecution', () => {
  it('yields the typed events in order, resuming with Last-Event-ID when the connection drops', async () => {
    answer = (request) =>
      request.lastEventId === undefined
        ? // Cut after the second event, in the middle of the third.
          { sse: sse(status(1, 'Pending'), task(2, 'Pending')) + 'id: 3\nevent: ta' }
        : { sse: sse(task(3, 'Running'), task(4, 'Completed'), status(5, 'Completed')) };
    const client = createTrellisClient({ baseUrl, bearer: 'token' });

    const seen: string[] = [];
    for await (const event of client.watchExecution(workflowId, executionId, { retryMs: 1 })) {
      expectTypeOf(event.id).toEqualTypeOf<number>();
      if (event.event === 'task') expectTypeOf(event.data.name).toEqualTypeOf<string>();
      // @ts-expect-error a log event's data has no status
      void event.data.status;
      if (event.event === 'task' || event.event === 'execution') {
        seen.push(`${event.id} ${event.event} ${event.data.status}`);
      }
    }

    expect(seen).toEqual([
      '1 execution Pending',
      '2 task Pending',
      '3 task Running',
      '4 task Completed',
      '5 execution Completed',
    ]);
    expect(received.map((entry) => [entry.url, entry.lastEventId, entry.authorization])).toEqual([
      [eventsPath, undefined, 'Bearer token'],
      [eventsPath, '2', 'Bearer token'],
    ]);
  });

  it('starts after the event asked for, and stops when its signal aborts', async () => {
    answer = () => ({ sse: sse(task(8, 'Running')), open: true });
    const client = createTrellisClient({ baseUrl });
    const stop = new AbortController();

    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const event of client.watchExecution(workflowId, executionId, {
          after: 7,
          signal: stop.signal,
        })) {
          seen.push(event.id);
          stop.abort(new Error('enough'));
        }
      })(),
    ).rejects.toThrow('enough');
    expect(seen).toEqual([8]);
    expect(received[0]?.lastEventId).toBe('7');
  });

  it('gives up after maxRetries reconnects that bring nothing, and at once on a 4xx', async () => {
    answer = () => ({ sse: ': nothing here\n\n' });
    const client = createTrellisClient({ baseUrl });
    const watch = async () => {
      for await (const event of client.watchExecution(workflowId, executionId, {
        retryMs: 1,
        maxRetries: 2,
      }))
        void event;
    };
    await expect(watch()).rejects.toThrow(/Lost the event stream .* 2 times/);
    expect(received).toHaveLength(3);

    received = [];
    answer = () => ({ status: 403, body: failure(['Forbidden']) });
    await expect(watch()).rejects.toMatchObject({ status: 403, messages: ['Forbidden'] });
    expect(received).toHaveLength(1);
  });
});

describe('waitForExecution', () => {
  const detail = (value: string) =>
    envelope({
      workflowId,
      executionId,
      workflow: '{}',
      status: value,
      executionStart: '2025-01-01T00:00:00Z',
      executionEnd: null,
    });

  it('follows the event stream to a final status, then reads the execution', async () => {
    answer = (request) =>
      request.url === eventsPath
        ? { sse: sse(status(1, 'Pending'), status(2, 'Running'), status(3, 'Completed')) }
        : { status: 200, body: detail('Completed') };
    const client = createTrellisClient({ baseUrl });

    const execution = await client.waitForExecution(workflowId, executionId);

    expect(execution.status).toBe('Completed');
    expect(received.map((entry) => entry.url)).toEqual([eventsPath, detailPath]);
  });

  it('waits for the statuses asked for, counting a past one only if it still holds', async () => {
    // The first Paused is the past (the run went on); the detail says so, and the wait goes on.
    let reads = 0;
    answer = (request) =>
      request.url === eventsPath
        ? { sse: sse(status(1, 'Paused'), status(2, 'Running'), status(3, 'Paused')), open: true }
        : { status: 200, body: detail(++reads === 1 ? 'Running' : 'Paused') };
    const client = createTrellisClient({ baseUrl });

    const execution = await client.waitForExecution(workflowId, executionId, { until: ['Paused'] });

    expect(execution.status).toBe('Paused');
    expect(received.filter((entry) => entry.url === detailPath)).toHaveLength(2);
  });

  it('says so when the run ended in another status', async () => {
    answer = (request) =>
      request.url === eventsPath
        ? { sse: sse(status(1, 'Running'), status(2, 'Failed')) }
        : { status: 200, body: detail('Failed') };
    const client = createTrellisClient({ baseUrl });

    await expect(
      client.waitForExecution(workflowId, executionId, { until: ['Paused'] }),
    ).rejects.toThrow(`Execution ${executionId} ended Failed (waited for Paused)`);
  });

  it('gives up after the timeout, naming the last status', async () => {
    answer = () => ({ sse: sse(status(1, 'Running')), open: true });
    const client = createTrellisClient({ baseUrl });

    await expect(
      client.waitForExecution(workflowId, executionId, { timeoutMs: 50 }),
    ).rejects.toThrow(/still Running after 50 ms/);
  });

  it('stops at an API error', async () => {
    answer = () => ({ status: 404, body: failure(['Execution not found']) });
    const client = createTrellisClient({ baseUrl });

    await expect(client.waitForExecution(workflowId, executionId)).rejects.toMatchObject({
      status: 404,
      messages: ['Execution not found'],
    });
  });
});

describe('types', () => {
  it('follow the API document', () => {
    // Only type-checked: the calls below never run.
    const client = createTrellisClient({ baseUrl: 'http://127.0.0.1:1' });
    const neverRun = () => {
      expectTypeOf(
        client.GET('/workflows/{workflowId}', { params: { path: { workflowId } } }),
      ).resolves.toEqualTypeOf<components['schemas']['WorkflowDetail']>();
      expectTypeOf(client.GET('/health')).resolves.toEqualTypeOf<
        components['schemas']['HealthReport']
      >();
      expectTypeOf(client.envelope.GET('/version')).resolves.toEqualTypeOf<
        components['schemas']['VersionResponse']
      >();
      // @ts-expect-error the path parameter is required
      void client.GET('/workflows/{workflowId}');
      // @ts-expect-error plugin bodies are capitalised
      void client.POST('/plugins', { body: { type: 'Net/Http', version: '1.0.0' } });
      // @ts-expect-error no such path
      void client.GET('/nowhere');
    };
    expect(neverRun).toBeTypeOf('function');
  });

  it("type a definition's tasks by their plugin's parameters (built-ins), expressions allowed", () => {
    expectTypeOf<BuiltInPluginParameters['Data/Json']>().toHaveProperty('expression');
    expectTypeOf<BuiltInPluginParameters['Flow/Delay']['milliseconds']>().toEqualTypeOf<number>();
    expectTypeOf<BuiltInPluginParameters['Net/Http']['method']>().toEqualTypeOf<
      string | undefined
    >();

    const typed: WorkflowDefinition = {
      name: 'Typed',
      variables: { ms: 5 },
      tasks: [
        { name: 'Wait', type: { plugin: 'Flow/Delay' }, parameters: { milliseconds: 10 } },
        {
          name: 'Later',
          type: { plugin: 'Flow/Delay', version: '1.0.0' },
          parameters: { milliseconds: "$[Variables('ms')]" },
        },
        {
          name: 'Fetch',
          type: { plugin: 'Net/Http' },
          parameters: { url: 'https://example.test', headers: { 'X-Id': "$[Variables('id')]" } },
        },
        { name: 'Configured', type: 'some-configuration', parameters: { anything: true } },
      ],
    };
    // Checked task by task, names included.
    const checked = defineWorkflow({
      name: 'Checked',
      tasks: [
        {
          name: 'Sum',
          type: { plugin: 'Data/Json' },
          // @ts-expect-error Data/Json takes `input`, not `data`
          parameters: { data: [1, 2], expression: '$sum($)' },
        },
        { name: 'Echo', type: { plugin: 'Flow/NoOp' }, parameters: { anything: 1 } },
      ],
    });
    expectTypeOf(checked.tasks[0].parameters.expression).toEqualTypeOf<'$sum($)'>();
    const mistyped: WorkflowDefinition = {
      name: 'Mistyped',
      tasks: [
        // @ts-expect-error milliseconds is a number (or an expression), not any string
        { name: 'Wait', type: { plugin: 'Flow/Delay' }, parameters: { milliseconds: 'soon' } },
      ],
    };
    const unknownPlugin: WorkflowDefinition = {
      name: 'Unknown',
      tasks: [
        // @ts-expect-error not a plugin the SDK knows (augment PluginParameters for your own)
        { name: 'Zip', type: { plugin: 'Compression/Zip' } },
      ],
    };
    expect([typed, checked, mistyped, unknownPlugin]).toHaveLength(4);
  });
});
