import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthorization } from '../../sdk/src/index.js';
import type { Role } from '#platform/config/types.js';
import { clientIn, startTrellis, users, type Trellis } from '../support/harness.js';
import { approvalsOncePaused, definition, noop, tasksOf } from '../support/engine-support.js';

// Every operation of the published document, tried by callers of project `alpha` (a member and
// an API key of alpha) and of project `beta` (a member) against alpha's resources: each gets what its roles allow in alpha, and 404 wherever it
// names a project it is not in, or alpha's ids from its own project. The operations come from the
// document, so a new one fails here until it says what it needs (a body, a resource id).

interface Operation {
  method: string;
  path: string;
  roles: Role[];
  scope: 'header' | 'path' | 'instance';
}

const document = JSON.parse(readFileSync('generated/openapi.json', 'utf8')) as {
  paths: Record<string, Record<string, { 'x-roles'?: Role[]; parameters?: unknown[] }>>;
  components: { parameters: Record<string, { in: string; name: string }> };
};

function parametersOf(operation: { parameters?: unknown[] }) {
  return (operation.parameters ?? []).map((parameter) => {
    const ref = (parameter as { $ref?: string }).$ref;
    return ref
      ? document.components.parameters[ref.split('/').pop()!]!
      : (parameter as { in: string; name: string });
  });
}

/** The protected operations: those with roles. The public ones belong to no project. */
const operations: Operation[] = Object.entries(document.paths).flatMap(([path, item]) =>
  ['get', 'put', 'post', 'delete', 'patch'].flatMap((method) => {
    const operation = item[method];
    const roles = operation?.['x-roles'] ?? [];
    if (!operation || roles.length === 0) return [];
    const parameters = parametersOf(operation);
    const scope = parameters.some((p) => p.in === 'header' && p.name === 'X-Trellis-Project')
      ? 'header'
      : parameters.some((p) => p.in === 'path' && p.name === 'projectId')
        ? 'path'
        : 'instance';
    return [{ method: method.toUpperCase(), path, roles, scope }];
  }),
);

const ann = { username: 'ann', password: 'ann-password' };
const bob = { username: 'bob', password: 'bob-password' };
/** What ann and bob hold in `default` (configuration), and in their projects (membership). */
const configured: Role[] = ['plugins'];
const annInAlpha: Role[] = ['workflow'];
const bobInBeta: Role[] = ['admin', 'config', 'workflow'];

let trellis: Trellis;
/** Alpha's resources, by the path parameter that names them. */
const alpha: Record<string, string> = { projectId: 'alpha', name: ann.username, revision: '1' };
/** The callers tried; the key of alpha (roles below) is made once alpha exists. */
const callers: Record<'ann' | 'bob' | 'alphaKey', Caller> = {
  ann: { who: 'ann', authorization: basicAuthorization(ann.username, ann.password) },
  bob: { who: 'bob', authorization: basicAuthorization(bob.username, bob.password) },
  alphaKey: { who: "alpha's key", authorization: '' },
};
const keyInAlpha: Role[] = ['config', 'workflow'];

beforeAll(async () => {
  trellis = await startTrellis({
    worker: true,
    config: {
      Security: {
        Basic: {
          Users: [
            { Name: users.admin.username, Password: users.admin.password, Roles: ['admin'] },
            { Name: ann.username, Password: ann.password, Roles: configured },
            { Name: bob.username, Password: bob.password, Roles: configured },
          ],
        },
      },
    },
  });
  await trellis.admin.POST('/projects', { body: { name: 'alpha' } });
  await trellis.admin.POST('/projects', { body: { name: 'beta' } });
  const member = (projectId: string, name: string, roles: Role[]) =>
    trellis.admin.PUT('/projects/{projectId}/members/{name}', {
      params: { path: { projectId, name } },
      body: { roles },
    });
  await member('alpha', ann.username, annInAlpha);
  await member('beta', bob.username, bobInBeta);

  const admin = clientIn(trellis, { basic: { ...users.admin } }, 'alpha');
  const gated = definition([
    { name: 'Gate', type: noop, manualApproval: { enabled: true } },
    { name: 'After', type: noop, dependencies: ['Gate'] },
  ]);
  const { id: workflowId } = await admin.POST('/workflows/Add', {
    body: { definition: JSON.stringify(gated) },
  });
  const { executionId } = await admin.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
    body: { workflowId },
  });
  const [approval] = await approvalsOncePaused(admin, workflowId, executionId);
  const { triggerId } = await admin.POST('/workflows/{workflowId}/triggers', {
    params: { path: { workflowId } },
    body: { workflowId, type: 'TimeBased', status: 'Active', properties: { cron: '0 3 * * *' } },
  });
  const { id: configId } = await admin.POST('/config', { body: signer('Vault') });
  const key = await trellis.admin.POST('/projects/{projectId}/keys', {
    params: { path: { projectId: 'alpha' } },
    body: { name: 'partner', roles: keyInAlpha },
  });
  callers.alphaKey.authorization = `Bearer ${key.key}`;
  Object.assign(alpha, {
    keyId: key.id,
    workflowId,
    executionId,
    approvalId: approval!.id,
    taskExecutionId: (await tasksOf(admin, workflowId, executionId)).Gate!.id,
    triggerId,
    configId,
  });
});
afterAll(async () => {
  await trellis?.stop();
});

const signer = (name: string) => ({
  name,
  type: 'Security/Hash',
  version: '1.0.0',
  specifications: { hmacKey: 'alpha-key' },
});

let unique = 0;
/** A valid body for each operation that takes one, so that only the project decides the answer. */
const bodies: Record<string, (ids: Record<string, string>) => unknown> = {
  'POST /config': () => signer(`Made-${++unique}`),
  'PUT /config/{configId}': () => signer('Vault'),
  'POST /workflows': () => ({
    definition: JSON.stringify(definition([{ name: 'A', type: noop }])),
  }),
  'POST /workflows/Add': () => ({
    definition: JSON.stringify(definition([{ name: 'A', type: noop }])),
  }),
  'POST /workflows/apply': () => ({
    workflows: [{ definition: JSON.stringify(definition([{ name: 'A', type: noop }])) }],
  }),
  'PUT /workflows/{workflowId}': ({ workflowId }) => ({
    workflowId,
    definition: JSON.stringify(definition([{ name: 'A', type: noop }])),
  }),
  'POST /workflows/{workflowId}/executions': ({ workflowId }) => ({ workflowId }),
  'POST /workflows/{workflowId}/tests': () => ({}),
  'POST /workflows/tests': () => ({
    definition: JSON.stringify(
      definition([{ name: 'A', type: noop }], { tests: [{ name: 'runs', expect: {} }] }),
    ),
  }),
  'POST /workflows/{workflowId}/replay': () => ({
    definition: JSON.stringify(definition([{ name: 'A', type: noop }])),
  }),
  'POST /workflows/{workflowId}/triggers': ({ workflowId }) => ({
    workflowId,
    type: 'Manual',
    status: 'Active',
    properties: {},
  }),
  'PUT /workflows/{workflowId}/triggers/{triggerId}': ({ workflowId, triggerId }) => ({
    workflowId,
    triggerId,
    type: 'TimeBased',
    status: 'Active',
    properties: { cron: '0 4 * * *' },
  }),
  'POST /workflows/{workflowId}/triggers/{triggerId}/backfill': () => ({
    from: new Date(Date.now() - 3 * 86_400_000).toISOString(),
    to: new Date(Date.now() - 86_400_000).toISOString(),
  }),
  // Previews: alpha's paused run is what other operations act on.
  'POST /executions/rerun': ({ executionId }) => ({ ids: [executionId], preview: true }),
  'POST /executions/cancel': ({ executionId }) => ({ ids: [executionId], preview: true }),
  'PUT /projects/{projectId}': ({ projectId }) => ({ name: projectId }),
  'PUT /projects/{projectId}/members/{name}': () => ({ roles: annInAlpha }),
  'POST /projects/{projectId}/keys': () => ({ name: `made-${++unique}`, roles: ['workflow'] }),
  'POST /projects': () => ({ name: `made-${++unique}` }),
  'PUT /plugins': () => ({}),
  'POST /plugins': () => ({}),
  'DELETE /plugins': () => ({}),
};
/** Operations whose body is optional: sent without one. */
const bodyless = [
  'POST /workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/approve',
  'POST /workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/reject',
  'POST /workflows/{workflowId}/executions/{executionId}/rerun',
  'POST /workflows/{workflowId}/executions/{executionId}/cancel',
];
/** Instance-wide plugin installs: tried only for the roles they answer, never carried out. */
const pluginChanges = new Set(['PUT /plugins', 'POST /plugins', 'DELETE /plugins']);

const keyOf = (operation: Operation) => `${operation.method} ${operation.path}`;
const resourceParameters = (operation: Operation) =>
  [...operation.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);

interface Caller {
  /** Who it is, as failures name it. */
  who: string;
  authorization: string;
  /** The project it names: a header or the path's `{projectId}`; none: its default. */
  project?: string;
}

/** Calls `operation` on `ids` as `caller`; answers the status and the body's text. */
async function call(operation: Operation, caller: Caller, ids: Record<string, string>) {
  const values: Record<string, string> = {
    ...ids,
    ...(caller.project ? { projectId: caller.project } : {}),
  };
  const url = new URL(
    operation.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name]!)),
    trellis.baseUrl,
  );
  const headers: Record<string, string> = {
    authorization: caller.authorization,
  };
  if (caller.project && operation.scope === 'header') headers['x-trellis-project'] = caller.project;
  const makeBody = bodies[keyOf(operation)];
  let body: string | undefined;
  if (makeBody) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(makeBody(ids));
  }
  const abort = new AbortController();
  const response = await fetch(url, {
    method: operation.method,
    headers,
    body,
    signal: abort.signal,
  });
  // An event stream of a paused run stays open: its status is the answer.
  const text = response.headers.get('content-type')?.startsWith('text/event-stream')
    ? (abort.abort(), '')
    : await response.text();
  return { status: response.status, text };
}

const allowed = (operation: Operation, held: Role[]) =>
  operation.roles.some((role) => held.includes(role));

/** What alpha holds, read by an instance admin: it must be unchanged by the calls that failed. */
async function alphaState() {
  const admin = clientIn(trellis, { basic: { ...users.admin } }, 'alpha');
  const workflowId = alpha.workflowId!;
  const executionId = alpha.executionId!;
  return {
    workflows: (await admin.GET('/workflows')).map((w) => [w.id, w.name]),
    workflow: await admin.GET('/workflows/{workflowId}', { params: { path: { workflowId } } }),
    execution: (
      await admin.GET('/workflows/{workflowId}/executions/{executionId}', {
        params: { path: { workflowId, executionId } },
      })
    ).status,
    triggers: await admin.GET('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
    }),
    configurations: await admin.GET('/config'),
    members: await trellis.admin.GET('/projects/{projectId}/members', {
      params: { path: { projectId: 'alpha' } },
    }),
    project: await trellis.admin.GET('/projects/{projectId}', {
      params: { path: { projectId: 'alpha' } },
    }),
  };
}

describe('every operation, across projects', () => {
  it('covers every operation of the document that takes a body', () => {
    const missing = operations
      .filter((operation) => {
        const item = document.paths[operation.path]![operation.method.toLowerCase()] as {
          requestBody?: { required?: boolean };
        };
        return item.requestBody?.required && !bodies[keyOf(operation)];
      })
      .map(keyOf);
    expect(missing).toEqual([]);
    expect(operations.length).toBeGreaterThan(50);
    for (const key of bodyless) expect(operations.map(keyOf)).toContain(key);
  });

  it('answers 404 to callers naming a project they are not in, as for one that does not exist, and changes nothing', async () => {
    const before = await alphaState();
    for (const operation of operations.filter((o) => o.scope !== 'instance')) {
      if (pluginChanges.has(keyOf(operation))) continue;
      for (const caller of [
        { ...callers.bob, project: 'alpha' },
        { ...callers.ann, project: 'beta' },
        { ...callers.alphaKey, project: 'beta' },
      ]) {
        const answer = await call(operation, caller, alpha);
        const nowhere = await call(operation, { ...caller, project: 'no-such-project' }, alpha);
        expect([keyOf(operation), caller.who, answer.status]).toEqual([
          keyOf(operation),
          caller.who,
          404,
        ]);
        expect((JSON.parse(answer.text) as { errors: unknown }).errors).toEqual([
          expect.objectContaining({ code: 'project.not_found' }),
        ]);
        const withoutName = (text: string, name: string) => {
          const { generatedAtUtc: _, ...rest } = JSON.parse(text) as Record<string, unknown>;
          return JSON.stringify(rest).replaceAll(name, '?');
        };
        expect(withoutName(answer.text, caller.project)).toBe(
          withoutName(nowhere.text, 'no-such-project'),
        );
      }
    }
    expect(await alphaState()).toEqual(before);
  });

  it("answers 404 to a caller of another project for alpha's ids, and lists none of them", async () => {
    const before = await alphaState();
    const alphaIds = ['workflowId', 'executionId', 'triggerId', 'configId', 'approvalId'].map(
      (name) => alpha[name]!,
    );
    for (const operation of operations.filter((o) => o.scope === 'header')) {
      const named = resourceParameters(operation);
      const answer = await call(operation, { ...callers.bob, project: 'beta' }, alpha);
      if (named.length > 0) {
        expect([keyOf(operation), answer.status, answer.text]).toEqual([
          keyOf(operation),
          404,
          expect.any(String),
        ]);
      } else if (operation.method === 'GET') {
        expect([keyOf(operation), answer.status]).toEqual([keyOf(operation), 200]);
        for (const id of alphaIds) expect(answer.text).not.toContain(id);
      } else {
        // A body naming alpha's execution (a bulk action's) learns nothing of it, not its workflow.
        expect([keyOf(operation), answer.text]).not.toEqual([
          keyOf(operation),
          expect.stringContaining(alpha.workflowId!),
        ]);
      }
    }
    expect(await alphaState()).toEqual(before);
  });

  it('lets each caller do in alpha exactly what its roles there allow, and the rest is 403', async () => {
    // Deletions last, so that every other operation still finds what it names.
    const ordered = [
      ...operations.filter((o) => o.method !== 'DELETE'),
      ...operations.filter((o) => o.method === 'DELETE').reverse(),
    ];
    for (const operation of ordered) {
      if (pluginChanges.has(keyOf(operation))) continue;
      // A key acts in its own project; of the instance-wide operations it may only ask who it is.
      let deleted = false;
      for (const [caller, held] of [
        [callers.ann, operation.scope === 'instance' ? configured : annInAlpha],
        [callers.alphaKey, operation.scope === 'instance' ? [] : keyInAlpha],
      ] as const) {
        // What one caller deleted, the next finds gone.
        if (deleted) continue;
        const answer = await call(operation, { ...caller, project: 'alpha' }, alpha);
        const expected =
          allowed(operation, held) ||
          (caller === callers.alphaKey && keyOf(operation) === 'GET /me')
            ? 'allowed'
            : 'refused';
        const seen =
          answer.status === 403
            ? 'refused'
            : [401, 404].includes(answer.status) || answer.status >= 500
              ? `${answer.status}`
              : 'allowed';
        expect([keyOf(operation), caller.who, seen, answer.text.slice(0, 300)]).toEqual([
          keyOf(operation),
          caller.who,
          expected,
          expect.any(String),
        ]);
        deleted = operation.method === 'DELETE' && seen === 'allowed';
      }
    }
  });
});
