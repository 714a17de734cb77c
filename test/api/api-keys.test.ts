/**
 * API keys through the real stack: shown once and stored only as a hash, acting in their own
 * project only, expiring, revoked for every API process from the next request on, their last
 * use recorded, and their creation and revocation in the audit trail without their secret.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components, TrellisClient } from '../../sdk/src/index.js';
import type { Role } from '#platform/config/types.js';
import { runCli, type CliResult } from '../support/cli.js';
import { addWorkflow, definition, noop } from '../support/engine-support.js';
import { basicAs, clientIn, startTrellis, users, type Trellis } from '../support/harness.js';
import { expectFailure } from './api-error.js';

type ApiKeyCreated = components['schemas']['ApiKeyCreated'];

/** A configured workflow user (in default), admin of partner-a by membership. */
const partnerAdmin = { username: 'partner-admin', password: 'partner-admin-password' };

let trellis: Trellis;
/** partner-a's admin, working there. */
let partner: TrellisClient;

beforeAll(async () => {
  trellis = await startTrellis({
    config: {
      Security: {
        Basic: {
          Users: [
            ...(['admin', 'config', 'plugins', 'workflow'] as const).map((role) => ({
              Name: users[role].username,
              Password: users[role].password,
              Roles: [role],
            })),
            {
              Name: partnerAdmin.username,
              Password: partnerAdmin.password,
              Roles: ['workflow' as const],
            },
          ],
        },
      },
    },
  });
  await trellis.admin.POST('/projects', { body: { name: 'partner-a' } });
  await trellis.admin.PUT('/projects/{projectId}/members/{name}', {
    params: { path: { projectId: 'partner-a', name: partnerAdmin.username } },
    body: { roles: ['admin'] },
  });
  partner = clientIn(trellis, { basic: partnerAdmin }, 'partner-a');
});
afterAll(async () => {
  await trellis?.stop();
});

let made = 0;
/** Creates a key of partner-a as its admin. */
function createKey(
  roles: Role[] = ['workflow'],
  extra: { expiresAt?: string; name?: string } = {},
): Promise<ApiKeyCreated> {
  return partner.POST('/projects/{projectId}/keys', {
    params: { path: { projectId: 'partner-a' } },
    body: { name: `key-${++made}`, roles, ...extra },
  });
}

const keyPath = (keyId: string) => ({ params: { path: { projectId: 'partner-a', keyId } } });
const asKey = (key: string, project?: string, of: { baseUrl: string } = trellis) =>
  clientIn(of, { bearer: key }, project);

describe('API keys', () => {
  it('are shown once, listed without their secret, and stored only as its hash', async () => {
    const created = await createKey(['workflow']);
    expect(created).toEqual({
      id: expect.any(String),
      key: expect.stringMatching(/^trellis_[A-Za-z0-9]{12}_[A-Za-z0-9]{43}$/),
      name: created.name,
      roles: ['workflow'],
      prefix: created.key.slice(0, 'trellis_'.length + 12),
      createdBy: partnerAdmin.username,
      createdAt: expect.any(String),
      expiresAt: null,
      lastUsedAt: null,
    });
    const secret = created.key.slice(created.prefix.length + 1);

    const listed = await partner.GET('/projects/{projectId}/keys', {
      params: { path: { projectId: 'partner-a' } },
    });
    const one = await partner.GET('/projects/{projectId}/keys/{keyId}', keyPath(created.id));
    const { key: _shownOnce, ...shown } = created;
    expect(one).toEqual({ ...shown, revokedAt: null });
    expect(listed).toContainEqual(one);
    expect(JSON.stringify([listed, one])).not.toContain(secret);

    const row = await trellis.db
      .selectFrom('apiKey')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    const stored = JSON.stringify({ ...row, hash: row.hash.toString('hex') });
    expect(stored).not.toContain(secret);
    expect(row.hash.toString('hex')).toBe(createHash('sha256').update(created.key).digest('hex'));
  });

  it('are made by project admins with names unique among live keys, and never by a key', async () => {
    const first = await createKey(['workflow'], { name: 'deploy' });
    const taken = await expectFailure(createKey(['workflow'], { name: 'deploy' }), 409);
    expect(taken.errors.map((e) => e.code)).toEqual(['key.name_taken']);
    await expectFailure(
      createKey(['workflow'], {
        name: 'late',
        expiresAt: new Date(Date.now() - 1000).toISOString(),
      }),
      409,
      'body.expiresAt: must be in the future',
    );
    await expectFailure(createKey(['workflow'], { name: 'no spaces' }), 400);
    // A workflow user of default is no admin there, and no member of partner-a.
    await expectFailure(
      clientIn(trellis, basicAs('workflow')).POST('/projects/{projectId}/keys', {
        params: { path: { projectId: 'default' } },
        body: { name: 'mine', roles: ['workflow'] },
      }),
      403,
      'admin',
    );
    await expectFailure(
      clientIn(trellis, basicAs('workflow')).GET('/projects/{projectId}/keys', {
        params: { path: { projectId: 'partner-a' } },
      }),
      404,
    );
    const adminKey = await createKey(['admin']);
    await expectFailure(
      asKey(adminKey.key).POST('/projects/{projectId}/keys', {
        params: { path: { projectId: 'partner-a' } },
        body: { name: 'child', roles: ['workflow'] },
      }),
      403,
      'may not create API keys',
    );
    // A revoked key frees its name.
    await partner.DELETE('/projects/{projectId}/keys/{keyId}', keyPath(first.id));
    expect((await createKey(['workflow'], { name: 'deploy' })).name).toBe('deploy');
  });

  it('act in their own project only, with their roles there', async () => {
    const { key } = await createKey(['workflow']);
    const inDefault = await addWorkflow(trellis.admin, definition([{ name: 'A', type: noop }]));
    const viaKey = asKey(key);
    const own = await addWorkflow(viaKey, definition([{ name: 'A', type: noop }]));
    expect((await viaKey.GET('/workflows')).map((w) => w.id)).toEqual([own]);
    expect((await partner.GET('/workflows')).map((w) => w.id)).toContain(own);
    expect((await asKey(key, 'partner-a').GET('/workflows')).map((w) => w.id)).toEqual([own]);

    // Another project's workflow is an unknown one; another project is one that does not exist.
    for (const workflowId of [inDefault, randomUUID()]) {
      const error = await expectFailure(
        viaKey.GET('/workflows/{workflowId}', { params: { path: { workflowId } } }),
        404,
      );
      expect(error.errors.map((e) => e.code)).toEqual(['workflow.not_found']);
    }
    for (const project of ['default', 'no-such-project']) {
      const error = await expectFailure(asKey(key, project).GET('/workflows'), 404);
      expect(error.errors.map((e) => e.code)).toEqual(['project.not_found']);
    }
    await expectFailure(
      viaKey.GET('/projects/{projectId}/members', { params: { path: { projectId: 'default' } } }),
      404,
    );
    // Its roles and no other: config, plugins and the instance are not its.
    await expectFailure(viaKey.GET('/config'), 403, 'admin, config');
    await expectFailure(viaKey.GET('/plugins'), 403);
    await expectFailure(viaKey.GET('/audit'), 403);
    await expectFailure(viaKey.POST('/projects', { body: { name: 'keys-project' } }), 403);
    expect(await viaKey.GET('/me')).toEqual({
      name: expect.stringMatching(/^key:partner-a\/key-\d+$/),
      roles: ['workflow'],
      scheme: 'Bearer',
      projects: [{ id: expect.any(String), name: 'partner-a', roles: ['workflow'] }],
    });
    expect((await viaKey.GET('/projects')).map((p) => p.name)).toEqual(['partner-a']);

    // Even an admin key is no instance admin: it is an admin of its project, whose trail it reads.
    const admin = asKey((await createKey(['admin'])).key);
    await expectFailure(admin.GET('/plugins'), 403);
    await expectFailure(admin.GET('/audit/verify'), 403);
    const trail = await admin.GET('/audit');
    expect(trail.length).toBeGreaterThan(0);
    expect(new Set(trail.map((entry) => entry.project))).toEqual(new Set(['partner-a']));
    await expectFailure(
      admin.GET('/workflows/{workflowId}', { params: { path: { workflowId: inDefault } } }),
      404,
    );
    expect(
      (
        await admin.GET('/projects/{projectId}/members', {
          params: { path: { projectId: 'partner-a' } },
        })
      ).map((m) => m.name),
    ).toEqual([partnerAdmin.username]);
  });

  it('are refused when forged, malformed or expired, saying which', async () => {
    const { key } = await createKey(['workflow'], {
      expiresAt: new Date(Date.now() + 1500).toISOString(),
    });
    await asKey(key).GET('/workflows');
    const forged = `${key.slice(0, -4)}${key.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    await expectFailure(asKey(forged).GET('/workflows'), 401, 'The API key is invalid.');
    await expectFailure(asKey('trellis_nope').GET('/workflows'), 401, 'The API key is malformed.');
    await sleep(1600);
    await expectFailure(
      asKey(key).GET('/workflows'),
      401,
      /^The API key "key:partner-a\/key-\d+" expired at /,
    );
  });

  it('record their last use, once a minute at most', async () => {
    const created = await createKey(['workflow']);
    const before = Date.now();
    await asKey(created.key).GET('/workflows');
    const used = await partner.GET('/projects/{projectId}/keys/{keyId}', keyPath(created.id));
    expect(Date.parse(used.lastUsedAt!)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(used.lastUsedAt!)).toBeLessThanOrEqual(Date.now() + 1000);
    await asKey(created.key).GET('/workflows');
    const again = await partner.GET('/projects/{projectId}/keys/{keyId}', keyPath(created.id));
    expect(again.lastUsedAt).toBe(used.lastUsedAt);
  });

  it('are revoked for every API process from the next request on, and stay listed', async () => {
    // A second API process on the same database, with Bearer JWTs not configured: keys work there.
    const other = await startTrellis({
      databaseUrl: trellis.databaseUrl!,
      config: { Security: { Bearer: { Enabled: false } } },
    });
    try {
      const created = await createKey(['workflow']);
      const here = asKey(created.key);
      const there = asKey(created.key, undefined, other);
      await here.GET('/workflows');
      await there.GET('/workflows');
      await partner.DELETE('/projects/{projectId}/keys/{keyId}', keyPath(created.id));
      await expectFailure(there.GET('/workflows'), 401, /was revoked/);
      await expectFailure(here.GET('/workflows'), 401, /was revoked/);

      const gone = await expectFailure(
        partner.GET('/projects/{projectId}/keys/{keyId}', keyPath(created.id)),
        404,
        /was revoked at/,
      );
      expect(gone.errors.map((e) => e.code)).toEqual(['key.revoked']);
      const listed = await partner.GET('/projects/{projectId}/keys', {
        params: { path: { projectId: 'partner-a' } },
      });
      expect(listed.find((key) => key.id === created.id)?.revokedAt).not.toBeNull();
      const twice = await expectFailure(
        partner.DELETE('/projects/{projectId}/keys/{keyId}', keyPath(created.id)),
        409,
      );
      expect(twice.errors.map((e) => e.code)).toEqual(['key.revoked']);
      const unknown = await expectFailure(
        partner.DELETE('/projects/{projectId}/keys/{keyId}', keyPath(randomUUID())),
        404,
      );
      expect(unknown.errors.map((e) => e.code)).toEqual(['key.not_found']);
      // Without JWTs, a Bearer value that is no key is no accepted scheme there.
      await expectFailure(
        clientIn(other, { bearer: 'eyJhbGciOiJIUzI1NiJ9.e30.x' }).GET('/workflows'),
        401,
        'The Authorization scheme is not accepted; use Basic or Bearer with an API key.',
      );
    } finally {
      await other.stop();
    }
  });

  it('leave their creation, use and revocation in the audit trail, never their secret', async () => {
    const created = await createKey(['workflow']);
    await addWorkflow(asKey(created.key), definition([{ name: 'A', type: noop }]));
    await partner.DELETE('/projects/{projectId}/keys/{keyId}', keyPath(created.id));
    await expectFailure(asKey(created.key).GET('/workflows'), 401);
    const entries = await trellis.admin.GET('/audit', { params: { query: { pageSize: 20 } } });
    const of = (operation: string) => entries.find((entry) => entry.operation === operation);
    expect(of('createApiKey')).toMatchObject({
      actor: partnerAdmin.username,
      actorKind: 'user',
      project: 'partner-a',
      targets: { projectId: 'partner-a', id: created.id },
      status: 200,
    });
    expect(of('addWorkflow')).toMatchObject({
      actor: `key:partner-a/${created.name}`,
      actorKind: 'key',
      project: 'partner-a',
    });
    expect(of('revokeApiKey')).toMatchObject({
      targets: { projectId: 'partner-a', keyId: created.id },
      status: 200,
    });
    expect(of('signIn')).toMatchObject({ actor: created.prefix, actorKind: 'key', status: 401 });
    expect(JSON.stringify(entries)).not.toContain(created.key.slice(created.prefix.length));
  });
});

describe('trellis keys', () => {
  const cli = (args: string[], credentials: Record<string, string>) =>
    runCli(args, { env: { TRELLIS_URL: trellis.baseUrl, ...credentials } });
  const asPartner = {
    TRELLIS_USER: partnerAdmin.username,
    TRELLIS_PASSWORD: partnerAdmin.password,
  };
  const printed = (result: CliResult) => `exit ${result.code}\n${result.stdout}\n${result.stderr}`;

  it('creates a key, printing it once with a warning, lists it without its secret, and revokes it', async () => {
    const created = await cli(
      ['keys', 'create', 'from-cli', '--role', 'workflow', '--project', 'partner-a'],
      asPartner,
    );
    expect(created.code, printed(created)).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^trellis_[A-Za-z0-9]{12}_[A-Za-z0-9]{43}$/);
    expect(created.stderr).toContain('Store it now: it is shown only this once.');

    const used = await cli(['workflows', 'list'], { TRELLIS_TOKEN: key });
    expect(used.code, printed(used)).toBe(0);

    const listed = await cli(['keys', 'list', '--project', 'partner-a'], asPartner);
    expect(listed.code, printed(listed)).toBe(0);
    expect(listed.stdout).toMatch(/from-cli\s+trellis_[A-Za-z0-9]{12}\s+workflow\s+partner-admin/);
    expect(listed.stdout).not.toContain(key.slice(-43));

    const revoked = await cli(['keys', 'revoke', 'from-cli', '--project', 'partner-a'], asPartner);
    expect(revoked.code, printed(revoked)).toBe(0);
    expect(revoked.stdout).toContain('API key "from-cli" was revoked.');
    const refused = await cli(['workflows', 'list'], { TRELLIS_TOKEN: key });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('was revoked');
  });
});
