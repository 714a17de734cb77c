import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '#platform/logging.js';
import { basicAuthorization } from '../../sdk/src/index.js';
import { startTrellis, users, type Trellis } from '../support/harness.js';
import { expectFailure } from './api-error.js';
import { sendRaw } from './http.js';

/** Log lines the service wrote, parsed. */
const logLines: Record<string, unknown>[] = [];
const logger = createLogger(
  { Level: 'info' },
  {},
  {
    write: (line: string) => {
      logLines.push(JSON.parse(line) as Record<string, unknown>);
    },
  },
);

let trellis: Trellis;
let healthy: Trellis;
beforeAll(async () => {
  [trellis, healthy] = await Promise.all([
    startTrellis({ logger }),
    startTrellis({ config: { HealthCheck: { Enabled: true } } }),
  ]);
});
afterAll(async () => {
  await Promise.all([trellis?.stop(), healthy?.stop()]);
});

describe('/version', () => {
  it('is public and returns the package version in the envelope', async () => {
    const { version } = JSON.parse(
      await readFile(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    const envelope = await trellis.client().envelope.GET('/version');
    expect(envelope).toMatchObject({ data: { version }, messages: [], succeeded: true });
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    // Public even with credentials that would fail elsewhere.
    const withBadCredentials = trellis.client({ basic: { username: 'ghost', password: 'x' } });
    expect(await withBadCredentials.GET('/version')).toEqual({ version });
  });
});

describe('/health', () => {
  it('is 404 (the normal envelope) when HealthCheck.Enabled is false', async () => {
    await expectFailure(trellis.client().GET('/health'), 404, 'GET /health');
  });

  it('reports every component without an envelope when enabled, publicly', async () => {
    const response = await sendRaw(healthy.baseUrl, 'GET', '/health', { as: null });
    expect(response.status).toBe(200);
    const report = response.body as {
      Status: string;
      HealthChecks: { Status: string; Component: string; Description: string }[];
      HealthCheckDuration: string;
    };
    expect(Object.keys(report).sort()).toEqual(['HealthCheckDuration', 'HealthChecks', 'Status']);
    expect(report.Status).toBe('Healthy');
    expect(report.HealthChecks.map((check) => check.Component)).toEqual([
      'Configuration',
      'Plugins',
      'Logger',
      'Database',
      'Temporal',
    ]);
    for (const check of report.HealthChecks) {
      expect(check).toEqual({
        Status: 'Healthy',
        Component: check.Component,
        Description: expect.any(String),
      });
    }
    expect(report.HealthCheckDuration).toMatch(/^\d{2}:\d{2}:\d{2}\.\d{7}$/);
    // The SDK returns the bare report too.
    expect(await healthy.client().GET('/health')).toMatchObject({ Status: 'Healthy' });
  });

  it('answers 503 naming the failing component when a dependency is down', async () => {
    const broken = await startTrellis({
      databaseUrl: healthy.databaseUrl,
      temporal: 'unreachable',
      config: { HealthCheck: { Enabled: true } },
    });
    try {
      const response = await sendRaw(broken.baseUrl, 'GET', '/health', { as: null });
      expect(response.status).toBe(503);
      const report = response.body as {
        Status: string;
        HealthChecks: { Status: string; Component: string }[];
      };
      expect(report.Status).toBe('Unhealthy');
      expect(report.HealthChecks.find((check) => check.Component === 'Temporal')?.Status).toBe(
        'Unhealthy',
      );
      expect(report.HealthChecks.find((check) => check.Component === 'Database')?.Status).toBe(
        'Healthy',
      );
    } finally {
      await broken.stop();
    }
  });
});

describe('documents and docs', () => {
  it('serves /openapi.json and /openapi.yaml publicly', async () => {
    const json = await sendRaw(trellis.baseUrl, 'GET', '/openapi.json', { as: null });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toMatch(/application\/json/);
    const document = json.body as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toMatch(/^3\.1/);
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/config', '/workflows/Add', '/health']),
    );
    const yaml = await sendRaw(trellis.baseUrl, 'GET', '/openapi.yaml', { as: null });
    expect(yaml.status).toBe(200);
    expect(String(yaml.body)).toMatch(/^openapi: 3\.1/m);
  });

  it('serves an interactive reference at /docs from local assets, pointed at /openapi.json', async () => {
    const page = await sendRaw(trellis.baseUrl, 'GET', '/docs', { as: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = String(page.body);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(assets).toEqual(
      expect.arrayContaining(['/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css']),
    );
    for (const asset of assets.filter((link) => link.startsWith('/'))) {
      const response = await fetch(`${trellis.baseUrl}${asset}`);
      expect(response.status, asset).toBe(200);
      expect((await response.arrayBuffer()).byteLength, asset).toBeGreaterThan(0);
    }
    const initializer = await (
      await fetch(`${trellis.baseUrl}/docs/swagger-initializer.js`)
    ).text();
    expect(initializer).toContain("url: '/openapi.json'");
    expect(initializer).not.toContain('petstore');
  });
});

describe('routing and errors', () => {
  it('answers an unknown route with 404 naming the method and path, with or without credentials', async () => {
    for (const as of ['admin', null] as const) {
      const response = await sendRaw(trellis.baseUrl, 'GET', '/no/such/route', { as });
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({
        data: null,
        succeeded: false,
        messages: ['No route matches GET /no/such/route.'],
      });
    }
    const post = await sendRaw(trellis.baseUrl, 'POST', '/nothing', {
      body: '{}',
      contentType: 'application/json',
    });
    expect(post.status).toBe(404);
  });

  it('answers a known path with an unsupported method with an envelope (405) and Allow', async () => {
    const response = await sendRaw(trellis.baseUrl, 'DELETE', '/version');
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, OPTIONS');
    expect(response.body).toMatchObject({
      data: null,
      succeeded: false,
      messages: ['DELETE is not allowed on /version; use GET, OPTIONS.'],
      errors: [{ code: 'route.method_not_allowed' }],
    });
    const patch = await sendRaw(trellis.baseUrl, 'PATCH', `/workflows/${randomUUID()}`);
    expect(patch.status).toBe(405);
    expect(patch.headers.get('allow')).toBe('DELETE, GET, PUT, OPTIONS');
  });

  it('matches a concrete path before a template (OpenAPI): PUT /workflows/Add is 405, not an update of workflow "Add"', async () => {
    for (const method of ['PUT', 'GET', 'DELETE']) {
      const body = method === 'GET' ? {} : { body: '{}', contentType: 'application/json' };
      const response = await sendRaw(trellis.baseUrl, method, '/workflows/Add', body);
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('POST, OPTIONS');
      expect(response.body).toMatchObject({ errors: [{ code: 'route.method_not_allowed' }] });
    }
    const options = await sendRaw(trellis.baseUrl, 'OPTIONS', '/workflows/Add', { as: null });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('POST, OPTIONS');
  });

  it('answers OPTIONS on any known path with the methods it has (Allow), without credentials', async () => {
    for (const [path, allow] of [
      ['/workflows', 'GET, POST, OPTIONS'],
      [`/workflows/${randomUUID()}`, 'DELETE, GET, PUT, OPTIONS'],
      ['/plugins', 'DELETE, GET, POST, PUT, OPTIONS'],
    ] as const) {
      const response = await sendRaw(trellis.baseUrl, 'OPTIONS', path, { as: null });
      expect(response.status).toBe(204);
      expect(response.headers.get('allow')).toBe(allow);
    }
    expect((await sendRaw(trellis.baseUrl, 'OPTIONS', '/nothing', { as: null })).status).toBe(404);
  });

  it('checks authentication and roles before looking at the input (401/403, not 400/415)', async () => {
    const anonymous = [
      await sendRaw(trellis.baseUrl, 'GET', '/workflows/not-a-uuid', { as: null }),
      await sendRaw(trellis.baseUrl, 'POST', '/config', {
        body: '{',
        contentType: 'application/json',
        as: null,
      }),
      await sendRaw(trellis.baseUrl, 'POST', '/config', {
        body: 'x',
        contentType: 'text/plain',
        as: null,
      }),
    ];
    expect(anonymous.map((response) => response.status)).toEqual([401, 401, 401]);
    const wrongRole = await sendRaw(trellis.baseUrl, 'POST', '/config', {
      body: '{',
      contentType: 'application/json',
      as: 'workflow',
    });
    expect(wrongRole.status).toBe(403);
  });
});

describe('HTTP as Express answered it', () => {
  it('sends JSON with its charset, length and a weak ETag, and 304 to a client that has it', async () => {
    const first = await fetch(`${trellis.baseUrl}/version`);
    const text = await first.text();
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(first.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^W\/"[0-9a-f]+-[A-Za-z0-9+/]+"$/);
    const again = await fetch(`${trellis.baseUrl}/version`, {
      headers: { 'If-None-Match': etag! },
    });
    // generatedAtUtc changes every millisecond: the same ETag only when the body is the same.
    if (again.headers.get('etag') === etag) {
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
    } else {
      expect(again.status).toBe(200);
    }
    const stale = await fetch(`${trellis.baseUrl}/version`, {
      headers: { 'If-None-Match': 'W/"0-stale"' },
    });
    expect(stale.status).toBe(200);
  });

  it('answers HEAD without a body, and a failure the same way', async () => {
    const head = await fetch(`${trellis.baseUrl}/version`, { method: 'HEAD' });
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('GET, OPTIONS');
    expect(await head.text()).toBe('');
  });

  it('answers a documentation path it does not serve as any unknown route (404 envelope)', async () => {
    const response = await sendRaw(trellis.baseUrl, 'GET', '/docs/no-such-asset.js', { as: null });
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({
      data: null,
      messages: ['No route matches GET /docs/no-such-asset.js.'],
    });
  });

  it('reads the query string as Express did (repeated names are lists) and refuses a malformed path escape', async () => {
    // Another instance: the request log test below looks for this one's GET /workflows.
    const paged = await sendRaw(healthy.baseUrl, 'GET', '/workflows?page=1&pageSize=2');
    expect(paged.status).toBe(200);
    expect(paged.body).toMatchObject({ pagination: { page: 1, pageSize: 2 } });
    const repeated = await sendRaw(healthy.baseUrl, 'GET', '/workflows?page=1&page=2');
    expect(repeated.status).toBe(400);
    const malformed = await sendRaw(healthy.baseUrl, 'GET', '/workflows/%E0%A4%A');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ data: null, succeeded: false });
  });
});

describe('request logs', () => {
  it('writes one line per request with method, path, status, duration and user, never credentials', async () => {
    const client = trellis.client({ basic: { ...users.workflow } });
    await client.GET('/workflows', { params: { query: { page: 1 } } });
    await expectFailure(
      trellis.client({ basic: { username: 'admin', password: 'leaked-guess' } }).GET('/config'),
      401,
    );
    // Lines are written when the response finishes; give the stream a moment.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const requests = logLines.filter((line) => line['msg'] === 'request');
    const list = requests.find((line) => line['path'] === '/workflows' && line['status'] === 200);
    expect(list).toMatchObject({
      method: 'GET',
      path: '/workflows',
      status: 200,
      user: users.workflow.username,
    });
    expect(typeof list!['durationMs']).toBe('number');
    const denied = requests.find(
      (line) => line['method'] === 'GET' && line['path'] === '/config' && line['status'] === 401,
    );
    expect(denied).toMatchObject({ user: null });
    const everything = JSON.stringify(logLines);
    expect(everything).not.toContain(users.workflow.password);
    expect(everything).not.toContain('leaked-guess');
    expect(everything).not.toContain(
      basicAuthorization(users.workflow.username, users.workflow.password).slice(6),
    );
  });
});
