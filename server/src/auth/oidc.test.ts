import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrellisConfig } from '#platform/config/types.js';
import { errorOf } from '../../../test/support/expect-error.js';
import { HttpError } from '../http-error.js';
import { createBearerAuthenticator, groupsFromClaims } from './bearer.js';

const bearer: TrellisConfig['Security']['Bearer'] = {
  Enabled: true,
  Secret: 'unit-test-secret-unit-test-secret-unit-test',
  Issuer: 'https://api-tokens.test',
  RolesClaim: 'roles',
  ClockToleranceSeconds: 0,
};

describe('groupsFromClaims', () => {
  it('reads an array or a single name at a dotted path, without duplicates or non-strings', () => {
    expect(groupsFromClaims({ groups: ['ops', 'ops', 3, 'dev'] }, 'groups')).toEqual([
      'ops',
      'dev',
    ]);
    expect(groupsFromClaims({ org: { teams: 'ops' } }, 'org.teams')).toEqual(['ops']);
    expect(groupsFromClaims({}, 'groups')).toEqual([]);
  });
});

describe('Single sign-on ID tokens as Bearer tokens', () => {
  let issuer = '';
  let close: () => void = () => undefined;
  let sign: (claims: Record<string, unknown>, audience?: string) => Promise<string>;
  let oidc: TrellisConfig['Security']['Oidc'];

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' }] };
    // A provider's discovery document and key set, as an OpenID provider serves them.
    const server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/.well-known/openid-configuration') {
        res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
      } else if (req.url === '/jwks') res.end(JSON.stringify(jwks));
      else res.writeHead(404).end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
    oidc = {
      Enabled: true,
      Issuer: issuer,
      ClientId: 'trellis-console',
      Scopes: 'openid groups',
      DisplayName: 'Test ID',
      GroupsClaim: 'groups',
    };
    sign = (claims, audience = 'trellis-console') =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setSubject('alice')
        .setIssuer(issuer)
        .setAudience(audience)
        .setExpirationTime('5m')
        .sign(privateKey);
  });
  afterAll(() => close());

  it('accepts an ID token issued to the console: named by issuer and subject, with its groups and no roles', async () => {
    const authenticate = createBearerAuthenticator(bearer, null, oidc);
    expect(
      await authenticate(`Bearer ${await sign({ groups: ['ops'], roles: ['admin'] })}`),
    ).toEqual({ name: `${issuer}#alice`, roles: [], groups: ['ops'] });
  });

  it('takes roles from RolesClaim when one is configured', async () => {
    const authenticate = createBearerAuthenticator(bearer, null, { ...oidc, RolesClaim: 'roles' });
    expect(await authenticate(`Bearer ${await sign({ roles: ['workflow'] })}`)).toMatchObject({
      roles: ['workflow'],
      groups: [],
    });
  });

  it('refuses an ID token issued to another client', async () => {
    const authenticate = createBearerAuthenticator(bearer, null, oidc);
    const error = await errorOf(authenticate(`Bearer ${await sign({}, 'another-app')}`), HttpError);
    expect(error.status).toBe(401);
    expect(error.messages).toEqual([`The bearer token's "aud" claim is invalid (check_failed).`]);
  });

  it("keeps accepting the Bearer section's tokens beside single sign-on's", async () => {
    const authenticate = createBearerAuthenticator(bearer, null, oidc);
    const token = await new SignJWT({ roles: ['workflow'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('ci')
      .setIssuer('https://api-tokens.test')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(bearer.Secret));
    expect(await authenticate(`Bearer ${token}`)).toEqual({
      name: 'https://api-tokens.test#ci',
      roles: ['workflow'],
    });
  });

  it('says so when the provider cannot be reached', async () => {
    const authenticate = createBearerAuthenticator({ ...bearer, Enabled: false }, null, {
      ...oidc,
      Issuer: 'http://127.0.0.1:9',
    });
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setSubject('alice')
      .setIssuer('http://127.0.0.1:9')
      .setAudience('trellis-console')
      .setExpirationTime('5m')
      .sign((await generateKeyPair('RS256')).privateKey);
    const error = await errorOf(authenticate(`Bearer ${token}`), HttpError);
    expect(error.status).toBe(401);
    expect(error.messages.join(' ')).toMatch(/identity provider's keys could not be found/);
  });
});
