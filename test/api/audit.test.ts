/**
 * The audit trail through the real stack: each kind of change recorded with its actor, project,
 * targets and outcome before the response reports it; the database refusing to change an entry;
 * `verify` (API and CLI) naming an entry changed behind its back; filters and paging.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalLinkToken } from '#application/notifications/approval-links.js';
import { createLogger } from '#platform/logging.js';
import type { components } from '../../sdk/src/index.js';
import { runCli } from '../support/cli.js';
import {
  addWorkflow,
  approvalsOncePaused,
  decideApproval,
  definition,
  delay,
  eventually,
  execute,
  noop,
} from '../support/engine-support.js';
import { basicAs, startTrellis, users, type Trellis } from '../support/harness.js';
import { expectFailure } from './api-error.js';

type AuditEntry = components['schemas']['AuditEntry'];

let trellis: Trellis;
/** The audit lines the service logged (at info, though its level is warn). */
const auditLines: { audit: Record<string, unknown> }[] = [];
beforeAll(async () => {
  trellis = await startTrellis({
    worker: true,
    logger: createLogger(
      { Level: 'warn' },
      {},
      {
        write: (line: string) => {
          const record = JSON.parse(line) as { component?: string; audit: Record<string, unknown> };
          if (record.component === 'audit') auditLines.push(record);
        },
      },
    ),
    config: { Security: { RateLimits: { FailedLoginsPerUser: 2 } } },
  });
});
afterAll(async () => {
  await trellis?.stop();
});

/** The newest entry of an operation (they are recorded before the response is sent). */
async function newest(operation: string, of = trellis): Promise<AuditEntry> {
  const [entry] = await of.admin.GET('/audit', {
    params: { query: { operation, pageSize: 1 } },
  });
  if (!entry) throw new Error(`no audit entry of ${operation}`);
  return entry;
}

const byAdmin = {
  actor: users.admin.username,
  actorKind: 'user',
  project: 'default',
  status: 200,
  requestId: expect.any(String),
  address: expect.stringMatching(/127\.0\.0\.1/),
};

/** `trellis <args>` as the admin. */
const cli = (args: string[]) =>
  runCli(args, {
    env: {
      TRELLIS_URL: trellis.baseUrl,
      TRELLIS_USER: users.admin.username,
      TRELLIS_PASSWORD: users.admin.password,
    },
  });

/** Runs `change` as the database's owner, past the trigger that keeps the trail append-only. */
async function behindItsBack(change: () => Promise<unknown>): Promise<void> {
  await sql`alter table audit_entry disable trigger audit_entry_append_only`.execute(trellis.db);
  try {
    await change();
  } finally {
    await sql`alter table audit_entry enable trigger audit_entry_append_only`.execute(trellis.db);
  }
}

describe('the audit trail', () => {
  it('records workflow changes, runs, cancels, reruns and decisions with their ids', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Gate', type: noop, manualApproval: { enabled: true } }]),
    );
    expect(await newest('addWorkflow')).toMatchObject({
      ...byAdmin,
      operation: 'addWorkflow',
      targets: { id: workflowId },
    });

    await trellis.admin.PUT('/workflows/{workflowId}', {
      params: { path: { workflowId } },
      body: {
        workflowId,
        definition: JSON.stringify(
          definition([{ name: 'Gate', type: noop, manualApproval: { enabled: true } }]),
        ),
      },
    });
    expect(await newest('updateWorkflow')).toMatchObject({ ...byAdmin, targets: { workflowId } });

    const executionId = await execute(trellis.admin, workflowId);
    expect(await newest('executeWorkflow')).toMatchObject({
      ...byAdmin,
      targets: { workflowId, executionId },
    });

    const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
    await decideApproval(trellis.admin, workflowId, executionId, approval!.id, 'approve');
    expect(await newest('approveApproval')).toMatchObject({
      ...byAdmin,
      targets: { workflowId, executionId, approvalId: approval!.id },
    });
    await trellis.admin.waitForExecution(workflowId, executionId, { timeoutMs: 20_000 });

    const rerun = await trellis.admin.POST(
      '/workflows/{workflowId}/executions/{executionId}/rerun',
      { params: { path: { workflowId, executionId } } },
    );
    expect(await newest('rerunExecution')).toMatchObject({
      ...byAdmin,
      targets: { workflowId, executionId, createdExecutionId: rerun.executionId },
    });

    const slow = await addWorkflow(trellis.admin, definition([{ name: 'Wait', ...delay(60_000) }]));
    const running = await execute(trellis.admin, slow);
    await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path: { workflowId: slow, executionId: running } },
    });
    expect(await newest('cancelExecution')).toMatchObject({
      ...byAdmin,
      targets: { workflowId: slow, executionId: running },
    });

    await trellis.admin.DELETE('/workflows/{workflowId}', { params: { path: { workflowId } } });
    const deleted = await newest('deleteWorkflow');
    expect(deleted).toMatchObject({ ...byAdmin, targets: { workflowId } });

    // Each entry is in the log as it was stored, its hash included: a copy for a SIEM.
    const stored = await trellis.db
      .selectFrom('auditEntry')
      .select(['hash', sql<string>`to_json(at) #>> '{}'`.as('at')])
      .where('id', '=', deleted.id)
      .executeTakeFirstOrThrow();
    expect(auditLines.find((line) => line.audit.id === deleted.id)?.audit).toEqual({
      ...deleted,
      at: stored.at,
      hash: stored.hash,
    });
  });

  it('records trigger and configuration changes and webhook deliveries, never their secrets', async () => {
    const workflowId = await addWorkflow(trellis.admin, definition([{ name: 'Go', type: noop }]));
    const signed = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      body: {
        workflowId,
        type: 'Webhook',
        status: 'Active',
        properties: { signature: 'StandardWebhooks' },
      },
    });
    expect(await newest('createTrigger')).toMatchObject({
      ...byAdmin,
      targets: { workflowId, triggerId: signed.triggerId },
    });

    const open = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      body: { workflowId, type: 'Webhook', status: 'Active', properties: { signature: 'None' } },
    });
    const delivered = await fetch(`${trellis.baseUrl}/hooks/${open.triggerId}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(delivered.status).toBe(202);
    const { data } = (await delivered.json()) as { data: { executionId: string } };
    expect(await newest('deliverWebhook')).toMatchObject({
      actor: 'webhook',
      actorKind: 'system',
      project: 'default',
      status: 202,
      targets: { triggerId: open.triggerId, workflowId, executionId: data.executionId },
    });

    await trellis.admin.DELETE('/workflows/{workflowId}/triggers/{triggerId}', {
      params: { path: { workflowId, triggerId: open.triggerId } },
    });
    expect(await newest('deleteTrigger')).toMatchObject({
      ...byAdmin,
      targets: { workflowId, triggerId: open.triggerId },
    });

    const configuration = await trellis.admin.POST('/config', {
      body: {
        name: 'audited-api',
        type: 'Net/Http',
        version: '1.0.0',
        specifications: { baseUrl: 'https://one.test', bearerToken: 'audit-secret-t0ken' },
      },
    });
    expect(await newest('createConfiguration')).toMatchObject({
      ...byAdmin,
      targets: { id: configuration.id },
    });

    const everything = JSON.stringify(
      await trellis.admin.GET('/audit', { params: { query: { pageSize: 1000 } } }),
    );
    expect(everything).not.toContain('audit-secret-t0ken');
    expect(everything).not.toContain(signed.secret!);
  });

  it('records refused sign-ins and refused roles, not as the operation of nobody', async () => {
    const wrong = trellis.client({ basic: { username: 'admin', password: 'not-it' } });
    await expectFailure(wrong.GET('/workflows'), 401);
    expect(await newest('signIn')).toMatchObject({
      actor: 'admin',
      actorKind: 'user',
      project: null,
      operation: 'signIn',
      status: 401,
      targets: {},
    });

    const configUser = trellis.client(basicAs('config'));
    await expectFailure(
      configUser.POST('/workflows/Add', { body: { definition: '{"name":"nope","tasks":[]}' } }),
      403,
    );
    expect(await newest('addWorkflow')).toMatchObject({
      actor: users.config.username,
      status: 403,
    });
    // Reads are not recorded.
    await trellis.admin.GET('/me');
    expect(
      await trellis.admin.GET('/audit', { params: { query: { operation: 'getCurrentUser' } } }),
    ).toEqual([]);
  });

  it('is for admins only', async () => {
    await expectFailure(trellis.client(basicAs('workflow')).GET('/audit'), 403);
    await expectFailure(trellis.client(basicAs('workflow')).GET('/audit/verify'), 403);
  });

  it('filters by project, actor, operation and time, and pages after an entry', async () => {
    const all = await trellis.admin.GET('/audit', { params: { query: { pageSize: 1000 } } });
    expect(all.length).toBeGreaterThan(10);
    const ids = all.map((entry) => BigInt(entry.id));
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0)));

    const first = await trellis.admin.GET('/audit', { params: { query: { pageSize: 4 } } });
    const second = await trellis.admin.GET('/audit', {
      params: { query: { pageSize: 4, after: first.at(-1)!.id } },
    });
    expect([...first, ...second]).toEqual(all.slice(0, 8));
    // A cursor past every id a bigint holds (the document allows 19 digits) is before none.
    const pastEvery = await trellis.admin.GET('/audit', {
      params: { query: { pageSize: 4, after: '9999999999999999999' } },
    });
    expect(pastEvery).toEqual(first);
    // Any RFC 3339 time bounds the trail, far in the past and at any offset.
    const sinceLongAgo = await trellis.admin.GET('/audit', {
      params: { query: { pageSize: 4, from: '1132-07-07T08:12:27.003-23:12' } },
    });
    expect(sinceLongAgo).toEqual(first);

    const byConfigUser = await trellis.admin.GET('/audit', {
      params: { query: { actor: users.config.username } },
    });
    expect(byConfigUser.map((entry) => entry.operation)).toEqual(['addWorkflow']);
    const instanceWide = await trellis.admin.GET('/audit', {
      params: { query: { project: 'default' } },
    });
    expect(instanceWide.every((entry) => entry.project === 'default')).toBe(true);
    expect(instanceWide.length).toBe(all.filter((entry) => entry.project === 'default').length);

    const middle = all[Math.floor(all.length / 2)]!;
    const since = await trellis.admin.GET('/audit', {
      params: { query: { from: middle.at, pageSize: 1000 } },
    });
    expect(since.every((entry) => entry.at >= middle.at)).toBe(true);
    expect(since.map((entry) => entry.id)).toContain(middle.id);
    const before = await trellis.admin.GET('/audit', {
      params: { query: { to: middle.at, pageSize: 1000 } },
    });
    expect(before.length + since.length).toBe(all.length);
  });

  it('is refused UPDATE and DELETE by the database, and verify names an entry changed behind its back', async () => {
    const { db } = trellis;
    await expect(
      db.updateTable('auditEntry').set({ status: 200 }).where('status', '=', 401).execute(),
    ).rejects.toThrow(/append-only/);
    await expect(db.deleteFrom('auditEntry').execute()).rejects.toThrow(/append-only/);

    const holds = await trellis.admin.GET('/audit/verify');
    expect(holds).toMatchObject({ intact: true, firstBreak: null });
    expect((await cli(['audit', 'verify'])).code).toBe(0);

    const signIn = await newest('signIn');
    // The database's owner can still do anything, the trigger's removal included: the chain shows it.
    await behindItsBack(() =>
      sql`update audit_entry set status = 200 where id = ${signIn.id}`.execute(db),
    );
    expect(await trellis.admin.GET('/audit/verify')).toEqual({
      intact: false,
      entries: holds.entries,
      firstBreak: { id: signIn.id, reason: 'altered' },
    });
    const broken = await cli(['audit', 'verify']);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain(`breaks at entry ${signIn.id}`);

    const listed = await cli(['audit', 'list', '--operation', 'signIn', '--json']);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id: signIn.id })]);

    await behindItsBack(() =>
      sql`update audit_entry set status = 401 where id = ${signIn.id}`.execute(db),
    );
    expect(await trellis.admin.GET('/audit/verify')).toMatchObject({ intact: true });
  });

  it('records sign-ins refused while a name is locked', async () => {
    const { username, password } = users.plugins;
    for (const attempt of [1, 2]) {
      await expectFailure(
        trellis.client({ basic: { username, password: `wrong-${attempt}` } }).GET('/workflows'),
        401,
      );
    }
    await expectFailure(trellis.client(basicAs('plugins')).GET('/plugins'), 429);
    expect(await newest('signInLocked')).toMatchObject({
      actor: username,
      actorKind: 'user',
      project: null,
      status: 429,
      targets: {},
      requestId: expect.any(String),
      address: expect.stringMatching(/127\.0\.0\.1/),
    });
    const entries = JSON.stringify(
      await trellis.admin.GET('/audit', { params: { query: { actor: username } } }),
    );
    expect(entries).not.toContain(password);
    expect(entries).not.toContain('wrong-1');
  });

  it("records a decision through an approval link as the link's, without its token", async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Gate', type: noop, manualApproval: { enabled: true } }]),
    );
    const executionId = await execute(trellis.admin, workflowId);
    const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
    const { token } = await approvalLinkToken(trellis.db, {
      eventId: `msg_audit_${approval!.id}`,
      approvalId: approval!.id,
      expiresAt: new Date(Date.now() + 60_000),
    });
    await trellis.client().POST('/approvals/decide/{token}', {
      params: { path: { token } },
      body: { decision: 'Approve' },
    });
    const entry = await newest('decideApprovalLink');
    expect(entry).toMatchObject({
      actor: 'approval link',
      actorKind: 'system',
      project: 'default',
      status: 200,
      targets: { linkId: token.split('.')[0], approvalId: approval!.id, executionId },
    });
    expect(JSON.stringify(entry)).not.toContain(token.split('.')[2]);
    await trellis.admin.waitForExecution(workflowId, executionId, { timeoutMs: 20_000 });
  });

  it('verify names the oldest entry left when older ones were deleted behind its back', async () => {
    const { db } = trellis;
    expect(await trellis.admin.GET('/audit/verify')).toMatchObject({ intact: true });
    const oldest = await db.selectFrom('auditEntry').select('id').orderBy('id').limit(4).execute();
    await behindItsBack(() =>
      db.deleteFrom('auditEntry').where('id', '<', oldest[3]!.id).execute(),
    );
    expect(await trellis.admin.GET('/audit/verify')).toMatchObject({
      intact: false,
      firstBreak: { id: oldest[3]!.id, reason: 'truncated' },
    });
    const broken = await cli(['audit', 'verify']);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain(`breaks at entry ${oldest[3]!.id}: it is the oldest entry`);
  });
});

describe('the retention', () => {
  it('purges through the API process, recording the purge, and the chain left verifies', async () => {
    // Entries live two seconds: the API process purges every two seconds.
    const brief = await startTrellis({ config: { Audit: { RetentionDays: 2 / 86_400 } } });
    try {
      const workflowId = await addWorkflow(brief.admin, definition([{ name: 'Go', type: noop }]));
      const added = await newest('addWorkflow', brief);
      expect(added.targets).toEqual({ id: workflowId });
      const purge = await eventually(async () => {
        const [latest] = await brief.admin.GET('/audit', {
          params: { query: { operation: 'auditPurge', pageSize: 1 } },
        });
        expect(BigInt(latest?.id ?? 0)).toBeGreaterThan(BigInt(added.id));
        expect(
          await brief.admin.GET('/audit', { params: { query: { operation: 'addWorkflow' } } }),
        ).toEqual([]);
        return latest!;
      }, 30_000);
      expect(purge).toMatchObject({
        actor: 'system',
        actorKind: 'system',
        project: null,
        status: 200,
        targets: { purged: expect.stringMatching(/^[1-9][0-9]*$/) },
      });
      expect(await brief.admin.GET('/audit/verify')).toMatchObject({
        intact: true,
        firstBreak: null,
      });
    } finally {
      await brief.stop();
    }
  });
});
