import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrellisConfig } from '#platform/config/types.js';
import { errorOf } from '../../../test/support/expect-error.js';
import { HttpError } from '../http-error.js';
import { createBearerAuthenticator, rolesFromClaims } from './bearer.js';

const secret = 'unit-test-secret-unit-test-secret-unit-test';
const settings: TrellisConfig['Security']['Bearer'] = {
  Enabled: true,
  Secret: secret,
  Issuer: 'https://issuer.test',
  Audience: 'trellis',
  RolesClaim: 'roles',
  ClockToleranceSeconds: 0,
};

async function hs256(
  claims: Record<string, unknown>,
  options: { exp?: number; key?: string } = {},
) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('alice')
    .setIssuer('https://issuer.test')
    .setAudience('trellis')
    .setExpirationTime(now + (options.exp ?? 300))
    .sign(new TextEncoder().encode(options.key ?? secret));
}

describe('rolesFromClaims', () => {
  it('reads an array, a space- or comma-separated string, and a nested claim; ignores unknown roles', () => {
    expect(rolesFromClaims({ roles: ['workflow', 'root'] }, 'roles')).toEqual(['workflow']);
    expect(rolesFromClaims({ roles: 'config plugins' }, 'roles')).toEqual(['config', 'plugins']);
    expect(rolesFromClaims({ roles: 'admin,workflow' }, 'roles')).toEqual(['admin', 'workflow']);
    expect(rolesFromClaims({ realm: { roles: ['admin'] } }, 'realm.roles')).toEqual(['admin']);
    expect(rolesFromClaims({}, 'roles')).toEqual([]);
  });
});

describe('Bearer authentication (HS256)', () => {
  const authenticate = createBearerAuthenticator(settings);

  it('accepts a valid token and takes the name from sub and the roles from the claim', async () => {
    const user = await authenticate(`Bearer ${await hs256({ roles: ['workflow'] })}`);
    expect(user).toEqual({ name: 'https://issuer.test#alice', roles: ['workflow'] });
  });

  it('names the bearer UsernamePrefix and the subject when a prefix is configured', async () => {
    const prefixed = createBearerAuthenticator({ ...settings, UsernamePrefix: 'sso:' });
    expect(await prefixed(`Bearer ${await hs256({ roles: ['workflow'] })}`)).toEqual({
      name: 'sso:alice',
      roles: ['workflow'],
    });
  });

  it('accepts a token expired less than ClockToleranceSeconds ago', async () => {
    const tolerant = createBearerAuthenticator({ ...settings, ClockToleranceSeconds: 60 });
    const header = `Bearer ${await hs256({}, { exp: -30 })}`;
    expect((await tolerant(header)).name).toBe('https://issuer.test#alice');
    const strict = await errorOf(authenticate(header), HttpError);
    expect(strict.messages).toEqual(['The bearer token has expired.']);
  });

  it('rejects an expired token, naming expiry', async () => {
    const error = await errorOf(
      authenticate(`Bearer ${await hs256({}, { exp: -600 })}`),
      HttpError,
    );
    expect(error.status).toBe(401);
    expect(error.messages).toEqual(['The bearer token has expired.']);
  });

  it('rejects a token signed with another key', async () => {
    const error = await errorOf(
      authenticate(`Bearer ${await hs256({}, { key: 'x'.repeat(40) })}`),
      HttpError,
    );
    expect(error.messages[0]).toMatch(/signature/);
  });

  it('rejects the wrong audience and the wrong issuer, naming the claim', async () => {
    const wrongAudience = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setIssuer('https://issuer.test')
      .setAudience('other')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(secret));
    expect((await errorOf(authenticate(`Bearer ${wrongAudience}`), HttpError)).messages[0]).toMatch(
      /"aud"/,
    );
    const wrongIssuer = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setIssuer('https://evil.test')
      .setAudience('trellis')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(secret));
    expect((await errorOf(authenticate(`Bearer ${wrongIssuer}`), HttpError)).messages[0]).toMatch(
      /"iss"/,
    );
  });

  it('rejects a token that is not yet valid (nbf)', async () => {
    const early = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setIssuer('https://issuer.test')
      .setAudience('trellis')
      .setNotBefore('1h')
      .setExpirationTime('2h')
      .sign(new TextEncoder().encode(secret));
    expect((await errorOf(authenticate(`Bearer ${early}`), HttpError)).messages[0]).toMatch(
      /"nbf"/,
    );
  });

  it('rejects garbage without echoing it', async () => {
    const error = await errorOf(authenticate('Bearer not.a.jwt'), HttpError);
    expect(error.messages.join(' ')).not.toContain('not.a.jwt');
  });
});

describe('Bearer authentication (RS256 and ES256 via JWKS)', () => {
  let url = '';
  let close: () => void = () => undefined;
  type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  const keys: { rs: PrivateKey; es: PrivateKey }[] = [];

  beforeAll(async () => {
    const rs = await generateKeyPair('RS256');
    const es = await generateKeyPair('ES256');
    keys.push({ rs: rs.privateKey, es: es.privateKey });
    const jwks = {
      keys: [
        { ...(await exportJWK(rs.publicKey)), kid: 'rs', alg: 'RS256', use: 'sig' },
        { ...(await exportJWK(es.publicKey)), kid: 'es', alg: 'ES256', use: 'sig' },
      ],
    };
    const server = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(jwks));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
    close = () => server.close();
  });
  afterAll(() => close());

  it('verifies tokens signed by either key of the set', async () => {
    const authenticate = createBearerAuthenticator({
      ...settings,
      Secret: undefined,
      JwksUri: url,
    });
    for (const [alg, kid] of [
      ['RS256', 'rs'],
      ['ES256', 'es'],
    ] as const) {
      const key = kid === 'rs' ? keys[0]!.rs : keys[0]!.es;
      const token = await new SignJWT({ roles: ['plugins'] })
        .setProtectedHeader({ alg, kid })
        .setSubject(`svc-${kid}`)
        .setIssuer('https://issuer.test')
        .setAudience('trellis')
        .setExpirationTime('5m')
        .sign(key);
      expect(await authenticate(`Bearer ${token}`)).toEqual({
        name: `https://issuer.test#svc-${kid}`,
        roles: ['plugins'],
      });
    }
  });

  it('refuses an HS256 token when only JWKS is configured', async () => {
    const authenticate = createBearerAuthenticator({
      ...settings,
      Secret: undefined,
      JwksUri: url,
    });
    const error = await errorOf(authenticate(`Bearer ${await hs256({})}`), HttpError);
    expect(error.status).toBe(401);
  });
});
