/**
 * A project's audit trail: its admins read its entries (and only its), under whatever name it
 * has now; instance admins read and verify the whole trail; a configured admin who is not an
 * instance admin reads `default`'s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrellisClient } from '../../sdk/src/index.js';
import { addWorkflow, definition, noop } from '../support/engine-support.js';
import { clientIn, startTrellis, users, type Trellis } from '../support/harness.js';
import { expectFailure } from './api-error.js';

const partnerAdmin = { username: 'partner-admin', password: 'partner-admin-password' };
const partnerWorker = { username: 'partner-worker', password: 'partner-worker-password' };
const defaultAdmin = { username: 'default-admin', password: 'default-admin-password' };

let trellis: Trellis;
let partnerAId: string;

const as = (user: { username: string; password: string }, project?: string): TrellisClient =>
  clientIn(trellis, { basic: { ...user } }, project);

/** The `project` of each entry `client` lists with `query`. */
async function projectsListed(client: TrellisClient, project?: string) {
  const entries = await client.GET('/audit', {
    params: { query: { pageSize: 1000, ...(project === undefined ? {} : { project }) } },
  });
  return new Set(entries.map((entry) => entry.project));
}

beforeAll(async () => {
  trellis = await startTrellis({
    config: {
      Projects: { InstanceAdmins: [users.admin.username] },
      Security: {
        Basic: {
          Users: [
            { Name: users.admin.username, Password: users.admin.password, Roles: ['admin'] },
            ...[partnerAdmin, partnerWorker].map((user) => ({
              Name: user.username,
              Password: user.password,
              Roles: ['workflow' as const],
            })),
            { Name: defaultAdmin.username, Password: defaultAdmin.password, Roles: ['admin'] },
          ],
        },
      },
    },
  });
  partnerAId = (await trellis.admin.POST('/projects', { body: { name: 'partner-a' } })).id;
  await trellis.admin.POST('/projects', { body: { name: 'partner-b' } });
  for (const [name, roles] of [
    [partnerAdmin.username, ['admin']],
    [partnerWorker.username, ['workflow']],
  ] as const) {
    await trellis.admin.PUT('/projects/{projectId}/members/{name}', {
      params: { path: { projectId: 'partner-a', name } },
      body: { roles: [...roles] },
    });
  }
  await addWorkflow(as(partnerAdmin, 'partner-a'), definition([{ name: 'Go', type: noop }]));
  await addWorkflow(as(users.admin, 'partner-b'), definition([{ name: 'Go', type: noop }]));
  await addWorkflow(trellis.admin, definition([{ name: 'Go', type: noop }]));
});
afterAll(async () => {
  await trellis?.stop();
});

describe("a project's audit trail", () => {
  it("is read by the project's admins, by its id or name, and holds only its entries", async () => {
    const admin = as(partnerAdmin);
    expect(await projectsListed(admin, 'partner-a')).toEqual(new Set(['partner-a']));
    const byId = await admin.GET('/audit', { params: { query: { project: partnerAId } } });
    expect(byId.map((entry) => [entry.projectId, entry.operation])).toEqual([
      [partnerAId, 'addWorkflow'],
      [partnerAId, 'putProjectMember'],
      [partnerAId, 'putProjectMember'],
    ]);
    expect(byId[0]).toMatchObject({ actor: partnerAdmin.username, project: 'partner-a' });
  });

  it('is 404 in a project the caller is not a member of, 403 where it is not admin', async () => {
    const notFound = await expectFailure(
      as(partnerAdmin).GET('/audit', { params: { query: { project: 'partner-b' } } }),
      404,
    );
    expect(notFound.errors[0]?.code).toBe('project.not_found');
    // Without `project`, the caller's default project: there it holds `workflow` only.
    await expectFailure(as(partnerAdmin).GET('/audit'), 403);
    await expectFailure(
      as(partnerWorker).GET('/audit', { params: { query: { project: 'partner-a' } } }),
      403,
    );
    await expectFailure(as(partnerAdmin).GET('/audit/verify'), 403);
  });

  it('is whole for instance admins; a configured admin who is not one reads default', async () => {
    expect(await projectsListed(trellis.admin)).toEqual(
      new Set([null, 'default', 'partner-a', 'partner-b']),
    );
    expect(await projectsListed(trellis.admin, 'partner-b')).toEqual(new Set(['partner-b']));
    expect(await trellis.admin.GET('/audit/verify')).toMatchObject({ intact: true });

    expect(await projectsListed(as(defaultAdmin))).toEqual(new Set(['default']));
    await expectFailure(
      as(defaultAdmin).GET('/audit', { params: { query: { project: 'partner-a' } } }),
      404,
    );
    await expectFailure(as(defaultAdmin).GET('/audit/verify'), 403);
  });

  it('follows its project when renamed; the old name still finds what was recorded under it', async () => {
    await trellis.admin.PUT('/projects/{projectId}', {
      params: { path: { projectId: 'partner-a' } },
      body: { name: 'partner-c' },
    });
    await addWorkflow(as(partnerAdmin, 'partner-c'), definition([{ name: 'Go', type: noop }]));

    const renamed = await as(partnerAdmin).GET('/audit', {
      params: { query: { project: 'partner-c' } },
    });
    expect(renamed.map((entry) => [entry.project, entry.operation])).toEqual([
      ['partner-c', 'addWorkflow'],
      ['partner-a', 'updateProject'],
      ['partner-a', 'addWorkflow'],
      ['partner-a', 'putProjectMember'],
      ['partner-a', 'putProjectMember'],
    ]);
    const underOldName = await trellis.admin.GET('/audit', {
      params: { query: { project: 'partner-a' } },
    });
    expect(underOldName.map((entry) => entry.id)).toEqual(
      renamed.slice(1).map((entry) => entry.id),
    );
    expect(await trellis.admin.GET('/audit/verify')).toMatchObject({ intact: true });
  });
});
