import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthorization } from '../../sdk/src/index.js';
import { startTrellis, users, type Trellis } from '../support/harness.js';

const allowed = 'https://console.example.com';
let trellis: Trellis;
let closed: Trellis;

beforeAll(async () => {
  [trellis, closed] = await Promise.all([
    startTrellis({ config: { Server: { Cors: { AllowedOrigins: [allowed] } } } }),
    startTrellis(),
  ]);
});
afterAll(async () => {
  await Promise.all([trellis?.stop(), closed?.stop()]);
});

const preflight = (baseUrl: string, origin: string) =>
  fetch(`${baseUrl}/workflows/Add`, {
    method: 'OPTIONS',
    headers: {
      Origin: origin,
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'authorization, content-type, idempotency-key',
    },
  });

const corsHeaders = (response: Response) =>
  [...response.headers.keys()].filter((name) => name.startsWith('access-control-'));

describe('CORS', () => {
  it('answers a preflight from an allowed origin with 204 and what it may send', async () => {
    const response = await preflight(trellis.baseUrl, allowed);
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(allowed);
    expect(response.headers.get('access-control-allow-methods')).toBe('GET, POST, PUT, DELETE');
    expect(response.headers.get('access-control-allow-headers')).toBe(
      'Authorization, Content-Type, Idempotency-Key, Last-Event-ID, X-Request-Id, traceparent, tracestate',
    );
    expect(response.headers.get('vary')).toMatch(/Origin/);
  });

  it('lets the allowed origin read answers, errors included', async () => {
    const ok = await fetch(`${trellis.baseUrl}/workflows`, {
      headers: {
        Origin: allowed,
        Authorization: basicAuthorization(users.admin.username, users.admin.password),
      },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(allowed);
    const unauthorized = await fetch(`${trellis.baseUrl}/workflows`, {
      headers: { Origin: allowed },
    });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe(allowed);
    expect(unauthorized.headers.get('access-control-expose-headers')).toBe(
      'WWW-Authenticate, X-Request-Id',
    );
  });

  it('gives other origins, and every origin when none is configured, no CORS headers', async () => {
    for (const response of [
      await preflight(trellis.baseUrl, 'https://evil.example.com'),
      await fetch(`${trellis.baseUrl}/version`, {
        headers: { Origin: 'https://evil.example.com' },
      }),
      await preflight(closed.baseUrl, allowed),
      await fetch(`${closed.baseUrl}/version`, { headers: { Origin: allowed } }),
    ]) {
      // A preflight is still an OPTIONS request, answered with Allow; without the CORS headers
      // the browser refuses to send the request it asked about.
      expect(corsHeaders(response)).toEqual([]);
    }
  });
});
