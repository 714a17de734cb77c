import { describe, expect, it } from 'vitest';
import { createTrellisClient, type Credentials, type TrellisClient } from '../../sdk/src/index.js';
import type { Role } from '#platform/config/types.js';
import { basicAs, mintToken, tokens, users, type Trellis } from '../support/harness.js';
import { expectFailure } from './api-error.js';

export interface AuthMatrixOptions {
  /** The role of the area (besides admin) allowed to call it. */
  role: Exclude<Role, 'admin'>;
  /** The running service. */
  trellis: () => Trellis;
  /** A read operation of the area, called with the client under test. */
  call: (client: TrellisClient) => Promise<unknown>;
}

/** A client that also remembers the last response, for its headers. */
function recordingClient(baseUrl: string, credentials: Credentials) {
  const seen: { response?: Response } = {};
  const client = createTrellisClient({
    baseUrl,
    ...credentials,
    fetch: async (request) => {
      seen.response = await fetch(request);
      return seen.response;
    },
  });
  return { client, seen };
}

/**
 * The auth matrix of one area: no credentials, bad credentials, invalid tokens (expired, wrong
 * audience, wrong signature, not yet valid) → 401 with `WWW-Authenticate`; the wrong role → 403
 * naming the roles; the area's role and admin → 200, by Basic and by Bearer.
 */
export function describeAuthMatrix({ role, trellis, call }: AuthMatrixOptions): void {
  const otherRole = (['config', 'plugins', 'workflow'] as const).find((r) => r !== role)!;

  describe(`auth matrix (role ${role})`, () => {
    it('rejects a call without credentials with 401 and both challenges', async () => {
      const { client, seen } = recordingClient(trellis().baseUrl, {});
      await expectFailure(call(client), 401, 'Authentication is required');
      const challenge = seen.response?.headers.get('www-authenticate') ?? '';
      expect(challenge).toMatch(/Basic realm="Trellis"/);
      expect(challenge).toMatch(/Bearer realm="Trellis"/);
    });

    it('rejects a wrong password and an unknown user with 401', async () => {
      const wrong = { basic: { username: users[role].username, password: 'wrong' } };
      await expectFailure(call(trellis().client(wrong)), 401, 'Invalid username or password');
      const ghost = { basic: { username: 'ghost', password: 'whatever' } };
      await expectFailure(call(trellis().client(ghost)), 401, 'Invalid username or password');
    });

    it('rejects expired, foreign, forged and not-yet-valid tokens with 401', async () => {
      const cases: [Promise<string>, RegExp][] = [
        [tokens.expired([role]), /expired/],
        [tokens.wrongAudience([role]), /"aud"/],
        [tokens.wrongIssuer([role]), /"iss"/],
        [tokens.wrongSignature([role]), /signature/],
        [tokens.notYetValid([role]), /"nbf"/],
      ];
      for (const [token, message] of cases) {
        const { client, seen } = recordingClient(trellis().baseUrl, { bearer: await token });
        await expectFailure(call(client), 401, message);
        expect(seen.response?.headers.get('www-authenticate')).toMatch(/Bearer/);
      }
    });

    it('refuses the wrong role with 403 naming the roles needed (Basic and Bearer)', async () => {
      await expectFailure(call(trellis().client(basicAs(otherRole))), 403, `admin, ${role}`);
      const noRoles = await mintToken({ roles: [] });
      await expectFailure(call(trellis().client({ bearer: noRoles })), 403, `admin, ${role}`);
      const otherToken = await tokens.valid([otherRole]);
      await expectFailure(call(trellis().client({ bearer: otherToken })), 403, `admin, ${role}`);
    });

    it(`lets ${role} and admin in, by Basic and by Bearer (roles as array or string)`, async () => {
      await call(trellis().client(basicAs(role)));
      await call(trellis().client(basicAs('admin')));
      await call(trellis().client({ bearer: await tokens.valid([role]) }));
      await call(trellis().client({ bearer: await tokens.valid(['admin']) }));
      await call(trellis().client({ bearer: await mintToken({ roles: `${otherRole} ${role}` }) }));
    });
  });
}
