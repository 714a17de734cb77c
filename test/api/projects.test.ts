import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrellisClient } from '../../sdk/src/index.js';
import {
  basicAs,
  clientIn,
  startTrellis,
  users,
  type Trellis,
  type TestUser,
} from '../support/harness.js';
import { addWorkflow, definition, execute, noop } from '../support/engine-support.js';
import { expectFailure } from './api-error.js';

// A second project beside `default`: an instance admin makes it and a member; the member works
// there and sees nothing of `default` through it, while configured users work in `default` as
// before projects.

const partner = { username: 'partner', password: 'partner-password' };

let trellis: Trellis;
let partnerA: TrellisClient;

/** A Basic client of a configured user, in `project` (none: its default project). */
function as(user: TestUser | typeof partner, project?: string): TrellisClient {
  return clientIn(
    trellis,
    typeof user === 'string' ? basicAs(user) : { basic: { ...user } },
    project,
  );
}

beforeAll(async () => {
  trellis = await startTrellis({
    worker: true,
    config: {
      Security: {
        Basic: {
          Users: [
            ...(['admin', 'config', 'plugins', 'workflow'] as const).map((role) => ({
              Name: users[role].username,
              Password: users[role].password,
              Roles: [role],
            })),
            { Name: partner.username, Password: partner.password, Roles: ['workflow' as const] },
          ],
        },
      },
    },
  });
  await trellis.admin.POST('/projects', { body: { name: 'partner-a' } });
  await trellis.admin.PUT('/projects/{projectId}/members/{name}', {
    params: { path: { projectId: 'partner-a', name: partner.username } },
    body: { roles: ['workflow'] },
  });
  partnerA = as(partner, 'partner-a');
});
afterAll(async () => {
  await trellis?.stop();
});

const wait = (client: TrellisClient, workflowId: string, executionId: string) =>
  client.waitForExecution(workflowId, executionId, { timeoutMs: 60_000 });

describe('projects', () => {
  it('are created by instance admins only, with unique names, and listed to their members', async () => {
    const created = await trellis.admin.POST('/projects', { body: { name: 'other' } });
    expect(created).toEqual({ id: expect.any(String), name: 'other' });
    const taken = await expectFailure(
      trellis.admin.POST('/projects', { body: { name: 'other' } }),
      409,
    );
    expect(taken.errors[0]?.code).toBe('project.name_taken');
    await expectFailure(as('workflow').POST('/projects', { body: { name: 'mine' } }), 403);
    await expectFailure(partnerA.POST('/projects', { body: { name: 'mine' } }), 403);

    const names = async (client: TrellisClient) =>
      (await client.GET('/projects')).map((project) => project.name);
    expect(await names(trellis.admin)).toEqual(['default', 'other', 'partner-a']);
    expect(await names(partnerA)).toEqual(['default', 'partner-a']);
    expect(await names(as('workflow'))).toEqual(['default']);
    await expectFailure(
      partnerA.GET('/projects/{projectId}', { params: { path: { projectId: created.id } } }),
      404,
    );
  });

  it('let their members run their workflows, and show them nothing of another project', async () => {
    const shared = definition([{ name: 'A', type: noop }]);
    const inDefault = await addWorkflow(trellis.admin, shared);
    const defaultRun = await execute(trellis.admin, inDefault);
    // Names are unique per project: the same name again, in partner-a.
    const own = await addWorkflow(partnerA, shared);
    const ownRun = await execute(partnerA, own);
    expect((await wait(partnerA, own, ownRun)).status).toBe('Completed');
    await wait(trellis.admin, inDefault, defaultRun);

    expect((await partnerA.GET('/workflows')).map((w) => w.id)).toEqual([own]);
    const inDefaultIds = (await as('workflow').GET('/workflows')).map((w) => w.id);
    expect(inDefaultIds).toContain(inDefault);
    expect(inDefaultIds).not.toContain(own);

    // Another project's workflow or run is exactly an unknown one.
    const unknown = randomUUID();
    for (const [workflowId, code] of [
      [inDefault, 'workflow.not_found'],
      [unknown, 'workflow.not_found'],
    ] as const) {
      const error = await expectFailure(
        partnerA.GET('/workflows/{workflowId}', { params: { path: { workflowId } } }),
        404,
      );
      expect(error.errors.map((e) => e.code)).toEqual([code]);
      await expectFailure(execute(partnerA, workflowId), 404);
    }
    for (const [workflowId, executionId] of [
      [inDefault, defaultRun],
      [inDefault, unknown],
    ] as const) {
      const error = await expectFailure(
        partnerA.GET('/workflows/{workflowId}/executions/{executionId}', {
          params: { path: { workflowId, executionId } },
        }),
        404,
      );
      expect(error.errors.map((e) => e.code)).toEqual(['execution.not_found']);
    }
    await expectFailure(
      as('workflow').GET('/workflows/{workflowId}/executions/{executionId}', {
        params: { path: { workflowId: own, executionId: ownRun } },
      }),
      404,
    );
    // A subworkflow may call only a workflow of its own project.
    await expectFailure(
      partnerA.POST('/workflows/Add', {
        body: {
          definition: JSON.stringify(definition([{ name: 'Call', workflow: inDefault }])),
        },
      }),
      400,
      /which does not exist/,
    );
  });

  it('answer a project the caller is not a member of as one that does not exist', async () => {
    for (const project of ['other', 'no-such-project', randomUUID()]) {
      const error = await expectFailure(as(partner, project).GET('/workflows'), 404);
      expect(error.errors.map((e) => e.code)).toEqual(['project.not_found']);
    }
    await expectFailure(as('workflow', 'partner-a').GET('/workflows'), 404);
  });

  it('keep configured users in default exactly as before', async () => {
    const viaDefault = as('workflow', 'default');
    const plain = as('workflow');
    expect(await viaDefault.GET('/workflows')).toEqual(await plain.GET('/workflows'));
    await expectFailure(plain.GET('/config'), 403);
    await expectFailure(plain.GET('/plugins'), 403);
    expect((await plain.GET('/me')).roles).toEqual(['workflow']);
  });

  it("are listed by /me with the caller's roles in each: every role for instance admins", async () => {
    const project = (name: string, roles: string[]) => ({ id: expect.any(String), name, roles });
    expect(await partnerA.GET('/me')).toEqual({
      name: partner.username,
      roles: ['workflow'],
      scheme: 'Basic',
      projects: [project('default', ['workflow']), project('partner-a', ['workflow'])],
    });
    expect((await as('config').GET('/me')).projects).toEqual([project('default', ['config'])]);
    const everyRole = ['admin', 'config', 'plugins', 'workflow'];
    const { roles, projects } = await trellis.admin.GET('/me');
    expect(roles).toEqual(['admin']);
    expect(projects).toEqual([
      project('default', everyRole),
      project('other', everyRole),
      project('partner-a', everyRole),
    ]);
    const listed = await trellis.admin.GET('/projects');
    expect(projects?.map(({ id, name }) => ({ id, name }))).toEqual(
      listed.map(({ id, name }) => ({ id, name })),
    );
  });

  it('have members managed by project admins and instance admins', async () => {
    await expectFailure(
      partnerA.PUT('/projects/{projectId}/members/{name}', {
        params: { path: { projectId: 'partner-a', name: 'someone' } },
        body: { roles: ['workflow'] },
      }),
      403,
    );
    await trellis.admin.PUT('/projects/{projectId}/members/{name}', {
      params: { path: { projectId: 'partner-a', name: partner.username } },
      body: { roles: ['admin'] },
    });
    const added = await partnerA.PUT('/projects/{projectId}/members/{name}', {
      params: { path: { projectId: 'partner-a', name: 'someone' } },
      body: { roles: ['workflow'] },
    });
    expect(added).toEqual({ name: 'someone', roles: ['workflow'] });
    const members = await partnerA.GET('/projects/{projectId}/members', {
      params: { path: { projectId: 'partner-a' } },
    });
    expect(members.map((m) => m.name)).toEqual(['partner', 'someone']);
    await partnerA.DELETE('/projects/{projectId}/members/{name}', {
      params: { path: { projectId: 'partner-a', name: 'someone' } },
    });
    // A project admin manages members, not the project itself.
    await expectFailure(
      partnerA.DELETE('/projects/{projectId}', { params: { path: { projectId: 'partner-a' } } }),
      403,
    );
    const notEmpty = await expectFailure(
      trellis.admin.DELETE('/projects/{projectId}', {
        params: { path: { projectId: 'partner-a' } },
      }),
      409,
    );
    expect(notEmpty.errors[0]?.code).toBe('project.not_empty');
  });
});
