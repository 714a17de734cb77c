import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PluginInputError, PluginRuntimeError } from '../../core/src/plugins/runner.js';
import {
  createRecordingLogger,
  runPluginFolder,
  type FolderRunOptions,
} from '../../core/src/plugins/testing.js';

const folder = fileURLToPath(new URL('.', import.meta.url));
let server: Server;
let base: string;

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
      if (url.pathname === '/status') {
        const status = Number(url.searchParams.get('code'));
        response.writeHead(status, { 'content-type': 'text/plain' }).end(`status ${status}`);
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
const run = async (parameters: Record<string, unknown>, options: FolderRunOptions = {}) =>
  (await runPluginFolder(folder, { parameters, ...options })) as Echo;

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
    expect(output.body.headers).toMatchObject({
      'x-one': '1',
      'x-two': '2',
      authorization: 'Bearer s3cret-token',
    });
  });

  it('fails on a non-2xx status: 5xx retryable, 4xx not', async () => {
    const serverError = run({ url: `${base}/status?code=503` });
    await expect(serverError).rejects.toThrow(PluginRuntimeError);
    await expect(serverError).rejects.toThrow(/returned HTTP 503 Service Unavailable: status 503/);
    await expect(run({ url: `${base}/status?code=404` })).rejects.toThrow(PluginInputError);
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
