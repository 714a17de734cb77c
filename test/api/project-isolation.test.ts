import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrellisClient } from '../../sdk/src/index.js';
import { clientIn, startTrellis, users, type Trellis } from '../support/harness.js';
import {
  approvalsOncePaused,
  decideApproval,
  definition,
  noop,
  tasksOf,
} from '../support/engine-support.js';
import { expectFailure } from './api-error.js';

// What a project owns besides its workflows: plugin configurations (their secrets included) and
// idempotency keys. `ops` works in `default` with its configured role and in `partner-b` as a
// member holding `config` and `workflow` there.

const ops = { username: 'ops', password: 'ops-password' };

let trellis: Trellis;
/** `ops` in `default`, where its configured role (`workflow`) holds. */
let opsInDefault: TrellisClient;
/** `ops` in `partner-b`, a member with `config` and `workflow`. */
let opsInB: TrellisClient;

function client(project?: string): TrellisClient {
  return clientIn(trellis, { basic: { ...ops } }, project);
}

beforeAll(async () => {
  trellis = await startTrellis({
    worker: true,
    config: {
      Security: {
        Basic: {
          Users: [
            {
              Name: users.admin.username,
              Password: users.admin.password,
              Roles: ['admin' as const],
            },
            { Name: ops.username, Password: ops.password, Roles: ['workflow' as const] },
          ],
        },
      },
    },
  });
  await trellis.admin.POST('/projects', { body: { name: 'partner-b' } });
  await trellis.admin.PUT('/projects/{projectId}/members/{name}', {
    params: { path: { projectId: 'partner-b', name: ops.username } },
    body: { roles: ['config', 'workflow'] },
  });
  opsInDefault = client();
  opsInB = client('partner-b');
});
afterAll(async () => {
  await trellis?.stop();
});

/** A Security/Hash configuration whose secret HMAC key tells whose it is. */
const signer = (name: string, hmacKey: string) => ({
  name,
  type: 'Security/Hash',
  version: '1.0.0',
  specifications: { hmacKey },
});
const digestWith = (key: string, input: string) =>
  createHmac('sha256', key).update(input).digest('hex');

const addDefinition = (client: TrellisClient, def: object) =>
  client.POST('/workflows/Add', { body: { definition: JSON.stringify(def) } });

async function runToEnd(client: TrellisClient, workflowId: string) {
  const { executionId } = await client.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
    body: { workflowId },
  });
  await client.waitForExecution(workflowId, executionId, { timeoutMs: 60_000 });
  return executionId;
}

describe('plugin configurations in projects', () => {
  it('are unknown to another project: not listed, read, changed or deleted there', async () => {
    const theirs = await trellis.admin.POST('/config', { body: signer('Vault', 'default-key') });
    const byId = { params: { path: { configId: theirs.id } } };
    const unknown = { params: { path: { configId: randomUUID() } } };
    expect((await opsInB.GET('/config')).map((c) => c.id)).not.toContain(theirs.id);
    // The same answer as for an id that names nothing.
    for (const target of [byId, unknown]) {
      const { configId } = target.params.path;
      for (const call of [
        () => opsInB.GET('/config/{configId}', target),
        () => opsInB.PUT('/config/{configId}', { ...target, body: signer('Vault', 'stolen') }),
        () => opsInB.DELETE('/config/{configId}', target),
      ]) {
        const error = await expectFailure(call(), 404);
        expect(error.errors).toEqual([
          { code: 'not_found', message: `Configuration "${configId}" was not found.` },
        ]);
      }
    }
    const kept = await trellis.admin.GET('/config/{configId}', byId);
    expect(kept).toMatchObject({ name: 'Vault', specifications: { hmacKey: '********' } });
  });

  it('have names unique per project, and each project lists only its own', async () => {
    const inDefault = await trellis.admin.POST('/config', { body: signer('Signer', 'd-key') });
    const inB = await opsInB.POST('/config', { body: signer('Signer', 'b-key') });
    expect(inB.id).not.toBe(inDefault.id);
    await expectFailure(
      opsInB.POST('/config', { body: signer('Signer', 'again') }),
      409,
      /already exists/,
    );
    const namesIn = async (client: TrellisClient) => (await client.GET('/config')).map((c) => c.id);
    expect(await namesIn(opsInB)).toEqual([inB.id]);
    expect(await namesIn(trellis.admin)).toContain(inDefault.id);
    expect(await namesIn(trellis.admin)).not.toContain(inB.id);
  });

  it('are used by the workflows of their project only, with their own secrets', async () => {
    // `Signer` exists in both projects (previous test); `Vault` in default only.
    const sign = (type: string) =>
      definition([{ name: 'Sign', type, parameters: { input: 'hello', hmac: true } }]);
    const refused = await expectFailure(addDefinition(opsInB, sign('Vault')), 400);
    const unknown = await expectFailure(addDefinition(opsInB, sign('NoSuchThing')), 400);
    expect(refused.messages).toEqual([
      expect.stringContaining("uses unknown plugin configuration 'Vault'"),
    ]);
    expect(refused.errors.map((e) => e.code)).toEqual(unknown.errors.map((e) => e.code));

    for (const [client, key] of [
      [opsInB, 'b-key'],
      [trellis.admin, 'd-key'],
    ] as const) {
      const { id } = await addDefinition(client, sign('Signer'));
      const executionId = await runToEnd(client, id);
      const task = (await tasksOf(client, id, executionId)).Sign!;
      const detail = await client.GET(
        '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}',
        { params: { path: { workflowId: id, executionId, taskExecutionId: task.id } } },
      );
      expect(detail.output).toMatchObject({ digest: digestWith(key, 'hello') });
    }
  });

  it('are not found by a run of another project, even when one of the same name exists there', async () => {
    // A run of partner-b waits at a gate; meanwhile its workflow stops naming `Courier` and
    // partner-b's `Courier` is deleted. default's `Courier` must not stand in for it.
    await trellis.admin.POST('/config', { body: signer('Courier', 'default-courier') });
    const own = await opsInB.POST('/config', { body: signer('Courier', 'b-courier') });
    const gated = definition([
      { name: 'Gate', type: noop, manualApproval: { enabled: true } },
      {
        name: 'Send',
        type: 'Courier',
        dependencies: ['Gate'],
        parameters: { input: 'x', hmac: true },
      },
    ]);
    const { id: workflowId } = await addDefinition(opsInB, gated);
    const { executionId } = await opsInB.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: { workflowId },
    });
    const [approval] = await approvalsOncePaused(opsInB, workflowId, executionId);
    await opsInB.PUT('/workflows/{workflowId}', {
      params: { path: { workflowId } },
      body: {
        workflowId,
        definition: JSON.stringify({ ...gated, tasks: [{ name: 'Send', type: noop }] }),
      },
    });
    await opsInB.DELETE('/config/{configId}', { params: { path: { configId: own.id } } });
    await decideApproval(opsInB, workflowId, executionId, approval!.id, 'approve');
    const ended = await opsInB.waitForExecution(workflowId, executionId, { timeoutMs: 60_000 });
    expect(ended.status).toBe('Failed');
    const send = (await tasksOf(opsInB, workflowId, executionId)).Send!;
    expect(send).toMatchObject({
      status: 'Failed',
      message: expect.stringContaining("Plugin configuration 'Courier' does not exist."),
    });
  });

  it('may be deleted while another project has a workflow naming its own of that name', async () => {
    await trellis.admin.POST('/config', { body: signer('Shared', 'd') });
    const own = await opsInB.POST('/config', { body: signer('Shared', 'b') });
    await addDefinition(
      trellis.admin,
      definition([{ name: 'S', type: 'Shared', parameters: { input: 'x' } }]),
    );
    await opsInB.DELETE('/config/{configId}', { params: { path: { configId: own.id } } });
    expect((await opsInB.GET('/config')).map((c) => c.name)).not.toContain('Shared');
  });
});

describe('idempotency keys in projects', () => {
  it('are kept per project: the same key in another project is another request', async () => {
    const key = `key-${randomUUID()}`;
    const def = definition([{ name: 'A', type: noop }]);
    const addWith = (client: TrellisClient) =>
      client.POST('/workflows/Add', {
        params: { header: { 'Idempotency-Key': key } },
        body: { definition: JSON.stringify(def) },
      });
    const inDefault = await addWith(opsInDefault);
    const inB = await addWith(opsInB);
    expect(inB.id).not.toBe(inDefault.id);
    expect((await opsInB.GET('/workflows')).map((w) => w.id)).toContain(inB.id);
    expect((await opsInDefault.GET('/workflows')).map((w) => w.id)).toContain(inDefault.id);
    // Within each project, a repeat is still the first request.
    expect((await addWith(opsInB)).id).toBe(inB.id);
    expect((await addWith(opsInDefault)).id).toBe(inDefault.id);
  });
});
