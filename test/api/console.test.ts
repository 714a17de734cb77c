/**
 * What the web console relies on from the server: `GET /me` (who the caller is, with which
 * roles), and `/ui`, the console's static files with a strict Content-Security-Policy and
 * caching fit for content-hashed assets. The console itself is driven in a browser by
 * test/console/console.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  mintToken,
  startTrellis,
  tokenUser,
  tokens,
  users,
  type Trellis,
} from '../support/harness.js';
import { expectFailure } from './api-error.js';

let trellis: Trellis;
let withTemporalUi: Trellis;
beforeAll(async () => {
  [trellis, withTemporalUi] = await Promise.all([
    startTrellis(),
    startTrellis({ config: { Temporal: { UiUrl: 'https://temporal.example.test/ui/' } } }),
  ]);
});
afterAll(async () => {
  await Promise.all([trellis?.stop(), withTemporalUi?.stop()]);
});

describe('GET /me', () => {
  it('says who a Basic user is and which roles it has, for every role', async () => {
    for (const [role, user] of Object.entries(users)) {
      const me = await trellis.client({ basic: { ...user } }).GET('/me');
      expect(me).toEqual({
        name: user.username,
        roles: [role],
        scheme: 'Basic',
        projects: [
          {
            id: expect.any(String),
            name: 'default',
            roles: role === 'admin' ? ['admin', 'config', 'plugins', 'workflow'] : [role],
          },
        ],
        ...(role === 'admin' ? { instanceAdmin: true } : {}),
      });
    }
  });

  it('says who a Bearer token is: its issuer and subject, and its roles claim', async () => {
    const token = await tokens.valid(['workflow', 'plugins']);
    expect(await trellis.client({ bearer: token }).GET('/me')).toEqual({
      name: 'https://issuer.trellis.test#token-user',
      roles: ['plugins', 'workflow'],
      scheme: 'Bearer',
      projects: [{ id: expect.any(String), name: 'default', roles: ['plugins', 'workflow'] }],
    });
  });

  it("never names a token's subject as a Basic user", async () => {
    const token = await mintToken({ subject: users.admin.username, roles: ['workflow'] });
    expect(await trellis.client({ bearer: token }).GET('/me')).toMatchObject({
      name: tokenUser('admin'),
    });
  });

  it('is 401 for a token that never expires or names no subject, saying what it needs', async () => {
    await expectFailure(
      trellis
        .client({ bearer: await mintToken({ roles: ['admin'], expiresInSeconds: null }) })
        .GET('/me'),
      401,
      'The bearer token has no "exp" claim: Trellis accepts only tokens that expire; have the identity provider issue tokens with an expiry.',
    );
    await expectFailure(
      trellis.client({ bearer: await mintToken({ roles: ['admin'], subject: null }) }).GET('/me'),
      401,
      'The bearer token has no "sub" claim: Trellis names the bearer by it; have the identity provider issue tokens with a subject.',
    );
  });

  it('is 401 without or with bad credentials, and 403 for a token with no role', async () => {
    await expectFailure(trellis.client().GET('/me'), 401);
    await expectFailure(
      trellis.client({ basic: { username: users.admin.username, password: 'wrong' } }).GET('/me'),
      401,
    );
    await expectFailure(trellis.client({ bearer: await tokens.expired() }).GET('/me'), 401);
    await expectFailure(
      trellis.client({ bearer: await tokens.valid([]) }).GET('/me'),
      403,
      'it needs one of the roles: admin, config, plugins, workflow',
    );
  });
});

const consolePolicy =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

async function get(base: string, path: string): Promise<{ response: Response; body: string }> {
  const response = await fetch(`${base}${path}`);
  return { response, body: await response.text() };
}

describe('/ui', () => {
  it('tells the console, without credentials, that single sign-on is not configured', async () => {
    expect(await trellis.client().GET('/auth/oidc')).toEqual({ enabled: false });
  });

  it('serves the console page, without credentials, under a strict policy and never cached stale', async () => {
    for (const path of [
      '/ui',
      '/ui/',
      '/ui/workflows/5d2a7c3e-8f41-4b6d-a0c2-1e9f7b3d5a21/runs/x',
    ]) {
      const { response, body } = await get(trellis.baseUrl, path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.headers.get('content-security-policy')).toBe(consolePolicy);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(body).toContain('<div id="app"></div>');
      // No inline script or style: everything the page loads is a file of its own.
      expect(body).not.toMatch(/<script>|<script(?![^>]*\bsrc=)[^>]*>|<style|style=/);
      // Without Temporal.UiUrl (and no embedded dev server) the run page has no Temporal link.
      expect(body).toContain('<meta name="trellis-temporal-ui" content="" />');
    }
  });

  it('serves the hashed assets the page names, cached for good, and 404 for any other', async () => {
    const { body } = await get(trellis.baseUrl, '/ui');
    const assets = [...body.matchAll(/(?:src|href)="(\/ui\/assets\/[^"]+)"/g)].map(
      (match) => match[1]!,
    );
    expect(assets.map((asset) => asset.replace(/-[A-Za-z0-9]{8,}\./, '-HASH.')).sort()).toEqual([
      '/ui/assets/favicon-HASH.svg',
      '/ui/assets/main-HASH.css',
      '/ui/assets/main-HASH.js',
    ]);
    for (const asset of assets) {
      const { response } = await get(trellis.baseUrl, asset);
      expect(response.status, asset).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('content-security-policy')).toBe(consolePolicy);
    }
    const script = await get(
      trellis.baseUrl,
      assets.find((asset) => asset.endsWith('.js'))!,
    );
    expect(script.response.headers.get('content-type')).toMatch(/^(text|application)\/javascript/);
    for (const missing of ['/ui/assets/main-NOPE.js', '/ui/assets/', '/ui/assets/x/y.css']) {
      const { response, body: text } = await get(trellis.baseUrl, missing);
      expect(response.status, missing).toBe(404);
      expect(JSON.parse(text)).toMatchObject({ data: null, succeeded: false });
    }
  });

  it("names the Temporal UI's workflow list of the namespace when Temporal.UiUrl is set", async () => {
    const { body } = await get(withTemporalUi.baseUrl, '/ui/approvals');
    expect(body).toContain(
      '<meta name="trellis-temporal-ui" content="https://temporal.example.test/ui/namespaces/default/workflows/" />',
    );
  });

  it('is where a browser opening the server’s address goes; an API client gets the API’s 404 there', async () => {
    const browser = await fetch(`${trellis.baseUrl}/`, {
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
      redirect: 'manual',
    });
    expect(browser.status).toBe(302);
    expect(browser.headers.get('location')).toBe('/ui/');
    const client = await get(trellis.baseUrl, '/');
    expect(client.response.status).toBe(404);
    expect(JSON.parse(client.body)).toMatchObject({ data: null, succeeded: false });
  });

  it('leaves the API as it was: other methods and paths are the API’s answers', async () => {
    const post = await fetch(`${trellis.baseUrl}/ui`, { method: 'POST' });
    expect(post.status).toBe(404);
    expect(await post.json()).toMatchObject({ succeeded: false });
    expect((await get(trellis.baseUrl, '/uix')).response.status).toBe(404);
  });
});
