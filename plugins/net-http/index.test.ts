import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PluginInputError, PluginRuntimeError } from '#plugin-host/runner.js';
import type { PluginNetworkFence } from '#plugin-host/contract.js';
import { defaultDeniedCidrs } from '#plugin-host/reach.js';
import {
  createRecordingLogger,
  runPluginFolder,
  type FolderRunOptions,
} from '../../test/support/plugin-folder.js';

const folder = fileURLToPath(new URL('.', import.meta.url));
let server: Server;
let base: string;
/** The headers of every request the test server received, in order. */
const received: IncomingMessage['headers'][] = [];

async function readBody(request: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of request) body += chunk;
  return body;
}

beforeAll(async () => {
  server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      const body = await readBody(request);
      received.push(request.headers);
      if (url.pathname === '/redirect') {
        const status = Number(url.searchParams.get('status') ?? 302);
        response.writeHead(status, { location: url.searchParams.get('to')! }).end();
        return;
      }
      if (url.pathname === '/status') {
        const status = Number(url.searchParams.get('code'));
        response.writeHead(status, { 'content-type': 'text/plain' }).end(`status ${status}`);
        return;
      }
      if (url.pathname.endsWith('/echo-error')) {
        // A careless server: its error page repeats the request's Authorization header.
        const pad = 'x'.repeat(Number(url.searchParams.get('pad') ?? 0));
        response.writeHead(500).end(`${pad}${request.headers.authorization ?? ''}`);
        return;
      }
      if (url.pathname === '/slow') {
        const timer = setTimeout(() => response.end('late'), 10_000);
        request.socket.on('close', () => clearTimeout(timer));
        return;
      }
      if (url.pathname === '/text') {
        response
          .writeHead(200, { 'content-type': 'text/plain', 'x-served-by': 'test' })
          .end('plain words');
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          method: request.method,
          path: url.pathname,
          query: Object.fromEntries(
            [...url.searchParams.keys()].map((k) => [k, url.searchParams.getAll(k)]),
          ),
          headers: request.headers,
          body,
        }),
      );
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

type Echo = {
  status: number;
  ok: boolean;
  headers: Record<string, string>;
  body: {
    method: string;
    path: string;
    query: Record<string, string[]>;
    headers: Record<string, string>;
    body: string;
  };
};
const fence = (changes: Partial<PluginNetworkFence> = {}): PluginNetworkFence => ({
  denyCidrs: [],
  trellisEndpoints: [],
  allowCidrs: [],
  defaultDenyCidrs: defaultDeniedCidrs,
  ...changes,
});
/** The test servers listen on loopback, which the default fence refuses: these tests allow it. */
const loopbackAllowed = fence({ allowCidrs: ['127.0.0.0/8'] });
const run = async (parameters: Record<string, unknown>, options: FolderRunOptions = {}) =>
  (await runPluginFolder(folder, {
    parameters,
    host: { network: loopbackAllowed },
    ...options,
  })) as Echo;

describe('Net/Http', () => {
  it('sends a GET with query and headers and returns status, headers and the parsed JSON body', async () => {
    const output = await run({
      url: `${base}/echo?fixed=1`,
      query: { page: 2, tag: ['a', 'b'] },
      headers: { 'X-Request-Id': 'abc' },
    });
    expect(output.status).toBe(200);
    expect(output.ok).toBe(true);
    expect(output.headers['content-type']).toBe('application/json');
    expect(output.body).toMatchObject({
      method: 'GET',
      path: '/echo',
      query: { fixed: ['1'], page: ['2'], tag: ['a', 'b'] },
      headers: { 'x-request-id': 'abc' },
    });
  });

  it('sends any method with a JSON or a text body', async () => {
    const json = await run({ url: `${base}/echo`, method: 'post', body: { name: 'Ann', n: [1] } });
    expect(json.body).toMatchObject({
      method: 'POST',
      body: '{"name":"Ann","n":[1]}',
      headers: { 'content-type': 'application/json' },
    });
    const text = await run({
      url: `${base}/echo`,
      method: 'PATCH',
      body: 'hello',
      headers: { 'Content-Type': 'text/csv' },
    });
    expect(text.body).toMatchObject({
      method: 'PATCH',
      body: 'hello',
      headers: { 'content-type': 'text/csv' },
    });
    const removed = await run({ url: `${base}/echo`, method: 'DELETE' });
    expect(removed.body.method).toBe('DELETE');
  });

  it('returns a text body as text', async () => {
    const output = await run({ url: `${base}/text` });
    expect(output.body).toBe('plain words');
    expect(output.headers['x-served-by']).toBe('test');
  });

  it('uses the configured base URL, default headers and bearer token, keeping the token out of logs', async () => {
    const logger = createRecordingLogger();
    const output = await run(
      { url: 'echo', headers: { 'X-Two': '2' } },
      {
        logger,
        specifications: {
          baseUrl: `${base}/`,
          headers: { 'X-One': '1' },
          bearerToken: 's3cret-token',
        },
      },
    );
    expect(received.at(-1)).toMatchObject({
      'x-one': '1',
      'x-two': '2',
      authorization: 'Bearer s3cret-token',
    });
    // The server echoed the token: the task's output does not carry it.
    expect(output.body.headers).toMatchObject({ authorization: 'Bearer ********' });
    expect(JSON.stringify(output)).not.toContain('s3cret-token');
  });

  it("sends a configuration's credentials only to the origin of its baseUrl", async () => {
    const other = createServer((request, response) => {
      received.push(request.headers);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const elsewhere = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    try {
      const specifications = {
        baseUrl: `${base}/api/`,
        headers: { 'X-Api-Key': 'k-1' },
        bearerToken: 'tok-1',
      };
      const before = received.length;
      await expect(run({ url: `${elsewhere}/collect` }, { specifications })).rejects.toThrow(
        new PluginInputError(
          `url "${elsewhere}/collect" is outside ${base}, the origin of the baseUrl setting; this configuration's credentials go only there (use a task without it for other sites)`,
        ),
      );
      expect(received.length).toBe(before);
      await expect(
        run({ url: `${base}/echo` }, { specifications: { bearerToken: 'tok-1' } }),
      ).rejects.toThrow(/the bearerToken setting needs a baseUrl/);

      // A redirect to another origin is followed without them (the task's own headers go on).
      const output = await run(
        {
          url: `/redirect?status=307&to=${encodeURIComponent(`${elsewhere}/landed`)}`,
          headers: { 'X-Task': 't' },
        },
        { specifications },
      );
      expect(output).toMatchObject({ status: 200, url: `${elsewhere}/landed` });
      const [first, second] = received.slice(-2);
      expect(first).toMatchObject({ authorization: 'Bearer tok-1', 'x-api-key': 'k-1' });
      expect(second).toMatchObject({ 'x-task': 't' });
      expect(second).not.toHaveProperty('authorization');
      expect(second).not.toHaveProperty('x-api-key');
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it('fails on a non-2xx status: 5xx retryable, 4xx not', async () => {
    const serverError = run({ url: `${base}/status?code=503` });
    await expect(serverError).rejects.toThrow(PluginRuntimeError);
    await expect(serverError).rejects.toThrow(/returned HTTP 503 Service Unavailable: status 503/);
    await expect(run({ url: `${base}/status?code=404` })).rejects.toThrow(PluginInputError);
  });

  it("takes the token out of an error's body before cutting it to 500 characters", async () => {
    const token = 'tok-0123456789abcdefghijklmnopqrstuv';
    const specifications = { baseUrl: `${base}/api/`, bearerToken: token };
    // 'Bearer ' and 32 characters fit in the first 500: the cut falls inside the token.
    const failed = run({ url: 'echo-error?pad=461' }, { specifications });
    await expect(failed).rejects.toThrow(/: x+Bearer \*{8}$/);
    await expect(failed).rejects.not.toThrow(token.slice(0, 8));
  });

  it('accepts a non-2xx status when allowed', async () => {
    expect((await run({ url: `${base}/status?code=404`, allowedStatusCodes: [404] })).status).toBe(
      404,
    );
    const output = await run({ url: `${base}/status?code=500`, failOnHttpError: false });
    expect(output).toMatchObject({ status: 500, ok: false, body: 'status 500' });
  });

  it('times out', async () => {
    const started = performance.now();
    await expect(run({ url: `${base}/slow`, timeoutMilliseconds: 200 })).rejects.toThrow(
      new PluginRuntimeError(`GET ${base}/slow timed out after 200 ms`),
    );
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('stops when the task is canceled', async () => {
    const controller = new AbortController();
    const attempt = run({ url: `${base}/slow` }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('canceled by user')), 100);
    await expect(attempt).rejects.toThrow('canceled by user');
  });

  it('reports a bad URL and an unreachable host clearly', async () => {
    await expect(run({ url: 'not a url' })).rejects.toThrow(PluginInputError);
    await expect(run({ url: 'ftp://example.test/x' })).rejects.toThrow(/must be http or https/);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = run({ url: `http://127.0.0.1:${port}/` });
    await expect(refused).rejects.toThrow(PluginRuntimeError);
    await expect(refused).rejects.toThrow(/failed: .*ECONNREFUSED/);
    await expect(run({})).rejects.toThrow(/parameter "url" is required/);
  });
});

describe('Net/Http network fence', () => {
  const attempt = (url: string, network = fence()) =>
    runPluginFolder(folder, { parameters: { url }, host: { network } });

  it('refuses loopback by default, by address or by a name that resolves to it', async () => {
    const before = received.length;
    const port = new URL(base).port;
    await expect(attempt(`${base}/echo`)).rejects.toThrow(
      new PluginInputError(
        `GET ${base}/echo refused: 127.0.0.1 is a loopback address, reachable only if Plugins.Network.AllowCidrs allows it`,
      ),
    );
    await expect(attempt(`http://localhost:${port}/echo`)).rejects.toThrow(
      /refused: localhost resolves to (127\.0\.0\.1|::1) is a loopback address/,
    );
    await expect(attempt(`http://[::ffff:127.0.0.1]:${port}/echo`)).rejects.toThrow(
      /refused: ::ffff:7f00:1 is a loopback address/,
    );
    await expect(attempt(`http://0.0.0.0:${port}/echo`)).rejects.toThrow(/refused: 0\.0\.0\.0/);
    expect(received.length).toBe(before);
  });

  it('refuses cloud metadata and link-local addresses without connecting', async () => {
    const started = performance.now();
    await expect(attempt('http://169.254.169.254/latest/meta-data/')).rejects.toThrow(
      /refused: 169\.254\.169\.254 is a linkLocal address/,
    );
    await expect(attempt('http://[fd00:ec2::254]/latest/meta-data/')).rejects.toThrow(
      /refused: fd00:ec2::254 is a uniqueLocal address/,
    );
    await expect(attempt('http://100.100.100.200/latest/meta-data/')).rejects.toThrow(/refused/);
    // The messages are the fence's; and nothing waited on a connection (each runs in a sandbox
    // process, so this bound is loose: a busy CI machine takes over a second for three).
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('checks every redirect: one to loopback is refused', async () => {
    // A server the fence allows (127.0.0.2 only) redirecting to one it does not (127.0.0.1).
    const redirector = createServer((request, response) => {
      response.writeHead(302, { location: `${base}/echo` }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.2', resolve));
    const from = `http://127.0.0.2:${(redirector.address() as AddressInfo).port}/start`;
    try {
      const before = received.length;
      await expect(attempt(from, fence({ allowCidrs: ['127.0.0.2/32'] }))).rejects.toThrow(
        new PluginInputError(
          `GET ${base}/echo refused: 127.0.0.1 is a loopback address, reachable only if Plugins.Network.AllowCidrs allows it`,
        ),
      );
      expect(received.length).toBe(before);
    } finally {
      await new Promise<void>((resolve) => redirector.close(() => resolve()));
    }
  });

  it("keeps Trellis's own ports refused inside allowed ranges, and DenyCidrs over AllowCidrs", async () => {
    const port = Number(new URL(base).port);
    await expect(
      attempt(
        `${base}/echo`,
        fence({ allowCidrs: ['127.0.0.0/8'], trellisEndpoints: [{ host: '127.0.0.1', port }] }),
      ),
    ).rejects.toThrow(/refused: 127\.0\.0\.1:\d+ is one of Trellis's own services/);
    await expect(
      attempt(
        `${base}/echo`,
        fence({ allowCidrs: ['127.0.0.0/8'], trellisEndpoints: [{ host: 'localhost', port }] }),
      ),
    ).rejects.toThrow(/one of Trellis's own services/);
    await expect(
      attempt(`${base}/echo`, fence({ allowCidrs: ['127.0.0.0/8'], denyCidrs: ['127.0.0.1/32'] })),
    ).rejects.toThrow(/refused: 127\.0\.0\.1 is in Plugins.Network.DenyCidrs/);
    expect(await attempt(`${base}/echo`, loopbackAllowed)).toMatchObject({ status: 200 });
  });
});
