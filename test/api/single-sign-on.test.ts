import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrellisClient } from '../../sdk/src/index.js';
import { clientIn, mintToken, startTrellis, tokenUser, type Trellis } from '../support/harness.js';
import {
  consoleClientId,
  signInAtProvider,
  startOpenIdProvider,
  type OpenIdProvider,
} from '../support/openid-provider.js';
import { expectFailure } from './api-error.js';

// Single sign-on against a real OpenID provider in-process: the console's authorization code
// flow with PKCE, driven as a browser would; its ID token is then the Bearer credential, and the
// groups it names give roles in the projects where `group:<name>` is a member.

let provider: OpenIdProvider;
let trellis: Trellis;
let callback: string;

beforeAll(async () => {
  provider = await startOpenIdProvider({ ann: ['ops'], bob: ['sales'] });
  trellis = await startTrellis({
    config: {
      Security: {
        Oidc: {
          Enabled: true,
          Issuer: provider.issuer,
          ClientId: consoleClientId,
          DisplayName: 'Test ID',
        },
      },
    },
  });
  callback = `${trellis.baseUrl}/ui/auth/callback`;
  provider.admit(callback);
  for (const [project, group] of [
    ['ops-team', 'ops'],
    ['sales-team', 'sales'],
  ] as const) {
    await trellis.admin.POST('/projects', { body: { name: project } });
    await trellis.admin.PUT('/projects/{projectId}/members/{name}', {
      params: { path: { projectId: project, name: `group:${group}` } },
      body: { roles: ['workflow'] },
    });
  }
}, 120_000);
afterAll(async () => {
  await trellis?.stop();
  await provider?.close();
});

/** Signs in at the provider as `login` the way the console does: its ID token. */
async function idTokenFor(login: string): Promise<string> {
  const issuer = new URL(provider.issuer);
  const insecure = { [oauth.allowInsecureRequests]: true };
  const server = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, insecure),
  );
  const client = { client_id: consoleClientId };
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  // As the console does: a nonce makes each sign-in's token its own, even within one second.
  const nonce = oauth.generateRandomNonce();
  const authorize = new URL(server.authorization_endpoint!);
  authorize.search = new URLSearchParams({
    client_id: consoleClientId,
    redirect_uri: callback,
    response_type: 'code',
    scope: 'openid profile groups',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  }).toString();
  const back = await signInAtProvider(authorize, login, callback);
  const answer = oauth.validateAuthResponse(server, client, back, state);
  const response = await oauth.authorizationCodeGrantRequest(
    server,
    client,
    oauth.None(),
    answer,
    callback,
    verifier,
    insecure,
  );
  const result = await oauth.processAuthorizationCodeResponse(server, client, response, {
    expectedNonce: nonce,
  });
  if (!result.id_token) throw new Error('no ID token');
  return result.id_token;
}

const as = (token: string, project?: string): TrellisClient =>
  clientIn(trellis, { bearer: token }, project);

describe('single sign-on', () => {
  it('tells the console, without credentials, where and how to sign in', async () => {
    expect(await trellis.client().GET('/auth/oidc')).toEqual({
      enabled: true,
      issuer: provider.issuer,
      clientId: consoleClientId,
      scopes: 'openid profile email groups',
      displayName: 'Test ID',
    });
    // The console's page may call the provider (discovery, the token exchange), nothing else.
    const page = await fetch(`${trellis.baseUrl}/ui`);
    expect(page.headers.get('content-security-policy')).toContain(
      `connect-src 'self' ${provider.issuer};`,
    );
  });

  it("gives a signed-in user its groups' roles in their projects, and nothing elsewhere", async () => {
    const token = await idTokenFor('ann');
    expect(await as(token, 'ops-team').GET('/me')).toEqual({
      name: `${provider.issuer}#ann`,
      roles: ['workflow'],
      scheme: 'Bearer',
      groups: ['ops'],
      projects: [{ id: expect.any(String), name: 'ops-team', roles: ['workflow'] }],
    });
    // Without a project, /me answers in her first one: a client learns where she may work.
    expect(await as(token).GET('/me')).toMatchObject({ roles: ['workflow'] });
    await expectFailure(as(token).GET('/workflows'), 404);
    expect(await as(token, 'ops-team').GET('/workflows')).toEqual([]);
    // Neither ann nor her groups are members of these: as if they did not exist.
    for (const project of ['sales-team', 'default']) {
      const refused = await expectFailure(as(token, project).GET('/workflows'), 404);
      expect(refused.errors[0]?.code).toBe('project.not_found');
    }
    expect((await as(token, 'ops-team').GET('/projects')).map((project) => project.name)).toEqual([
      'ops-team',
    ]);
  });

  it("gives a subject's own membership beside its groups'", async () => {
    const token = await idTokenFor('bob');
    await expectFailure(as(token, 'ops-team').GET('/workflows'), 404);
    await trellis.admin.PUT('/projects/{projectId}/members/{name}', {
      params: { path: { projectId: 'ops-team', name: `${provider.issuer}#bob` } },
      body: { roles: ['config'] },
    });
    expect(await as(token, 'ops-team').GET('/me')).toMatchObject({ roles: ['config'] });
    expect(await as(token, 'sales-team').GET('/me')).toMatchObject({ roles: ['workflow'] });
  });

  it("records a token's first use as a sign-in", async () => {
    const token = await idTokenFor('ann');
    await as(token, 'ops-team').GET('/me');
    await as(token, 'ops-team').GET('/workflows');
    const signIns = await trellis.admin.GET('/audit', {
      params: { query: { operation: 'signIn', actor: `${provider.issuer}#ann` } },
    });
    // One for this token, one for the token of the test before.
    expect(signIns).toHaveLength(2);
    expect(signIns[0]).toMatchObject({ status: 200, project: null });
  });

  it("refuses an ID token issued to another client, and keeps accepting the Bearer section's tokens", async () => {
    const token = await idTokenFor('ann');
    const [header = '', payload = '', signature = ''] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as object;
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, aud: 'another-app' })).toString('base64url')}.${signature}`;
    await expectFailure(as(forged, 'ops-team').GET('/me'), 401);
    expect(await as(await mintToken({ roles: ['workflow'] })).GET('/me')).toEqual({
      name: tokenUser('token-user'),
      roles: ['workflow'],
      scheme: 'Bearer',
      projects: [{ id: expect.any(String), name: 'default', roles: ['workflow'] }],
    });
  });
});
