/**
 * `GET /executions` and `GET /executions/summary`: a project's executions across its workflows,
 * filtered and paged, and the overview's figures. The rows the filters and figures are checked
 * against are written straight to PostgreSQL in a project of their own (their times and
 * durations known); the summary of real runs (a failed task, an approval waiting) is another
 * project's.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutionWithTasks } from '#store/execution-repository.js';
import type { ExecutionStatus } from '#store/tables.js';
import type { TrellisClient } from '../../sdk/src/index.js';
import {
  clientIn,
  loopbackAllowed,
  startTrellis,
  users,
  type Trellis,
} from '../support/harness.js';
import { approvalsOncePaused, definition, noop } from '../support/engine-support.js';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';
import { expectFailure } from './api-error.js';
import { simpleDefinition } from './definitions.js';

let trellis: Trellis;
let server: ScriptedServer;
/** The admin in project `explorer`, whose executions are the seeded rows. */
let explorer: TrellisClient;
let explorerProjectId: string;

interface Seeded {
  id: string;
  workflowId: string;
  status: ExecutionStatus;
  start: number;
  startedBy: string | null;
  triggerId: string | null;
}
const seeded: Seeded[] = [];
const workflows: Record<'nightly' | 'hooked', string> = { nightly: '', hooked: '' };
const triggers: Record<'schedule' | 'hook', string> = { schedule: '', hook: '' };
const base = Date.parse('2026-11-20T00:00:00Z');
const statuses: ExecutionStatus[] = ['Completed', 'Failed', 'Running', 'Canceled'];

beforeAll(async () => {
  [trellis, server] = await Promise.all([
    startTrellis({ worker: true, config: loopbackAllowed }),
    startScriptedServer(),
  ]);
  const project = await trellis.admin.POST('/projects', { body: { name: 'explorer' } });
  explorerProjectId = project.id;
  explorer = clientIn(trellis, { basic: { ...users.admin } }, 'explorer');
  const add = async (name: string) =>
    (await explorer.POST('/workflows/Add', { body: { definition: simpleDefinition(name) } })).id;
  workflows.nightly = await add('Nightly');
  workflows.hooked = await add('Hooked');
  const addTrigger = async (type: 'TimeBased' | 'Webhook', properties: Record<string, unknown>) =>
    (
      await explorer.POST('/workflows/{workflowId}/triggers', {
        params: { path: { workflowId: workflows.hooked } },
        body: { workflowId: workflows.hooked, type, status: 'DeActive', properties },
      })
    ).triggerId;
  triggers.schedule = await addTrigger('TimeBased', { cron: '0 3 * * *' });
  triggers.hook = await addTrigger('Webhook', { signature: 'None' });
  // 40 runs over 14 distinct start times (every third shares its time with its neighbours),
  // started by ann, bob, the schedule and the webhook in turn.
  const starters = [
    { startedBy: 'ann', triggerId: null },
    { startedBy: 'bob', triggerId: null },
    { startedBy: null, triggerId: triggers.schedule },
    { startedBy: null, triggerId: triggers.hook },
  ];
  for (let index = 0; index < 40; index++) {
    const workflowId = index % 5 === 0 ? workflows.nightly : workflows.hooked;
    const starter = starters[index % starters.length]!;
    const status = statuses[index % statuses.length]!;
    const start = base + Math.floor(index / 3) * 60_000;
    const { execution } = await createExecutionWithTasks(trellis.db, {
      projectId: explorerProjectId,
      workflowId,
      workflowName: workflowId === workflows.nightly ? 'Nightly' : 'Hooked',
      definition: simpleDefinition('seeded'),
      taskNames: [],
      temporalWorkflowId: `explorer-${randomUUID()}`,
      status,
      executionStart: new Date(start),
      executionEnd: status === 'Running' ? null : new Date(start + 1000 * (index + 1)),
      ...starter,
    });
    seeded.push({ id: execution.id, workflowId, status, start, ...starter });
  }
}, 120_000);
afterAll(async () => {
  await trellis?.stop();
  await server?.close();
});

/** The seeded ids that pass `keep`, in the list's order: newest first, ties by id. */
function expected(keep: (row: Seeded) => boolean = () => true): string[] {
  return seeded
    .filter(keep)
    .sort((a, b) => b.start - a.start || (a.id < b.id ? 1 : -1))
    .map((row) => row.id);
}

interface ListQuery {
  status?: ExecutionStatus[];
  workflowId?: string;
  trigger?: string;
  startedBy?: string;
  from?: string;
  to?: string;
  after?: string;
  pageSize?: number;
}

/** Every page of the list after `after` until a short one. */
async function pageThrough(client: TrellisClient, query: ListQuery, pageSize: number) {
  const ids: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await client.GET('/executions', {
      params: { query: { ...query, pageSize, ...(after ? { after } : {}) } },
    });
    ids.push(...page.map((item) => item.id));
    if (page.length < pageSize) return ids;
    after = page.at(-1)!.id;
  }
}

const listed = async (query: ListQuery) =>
  (await explorer.GET('/executions', { params: { query } })).map((item) => item.id);

describe('GET /executions', () => {
  it('lists the project’s executions of every workflow, newest first, each with its workflow', async () => {
    const page = await explorer.GET('/executions', { params: { query: {} } });
    expect(page.map((item) => item.id)).toEqual(expected());
    const first = seeded.find((row) => row.id === page[0]!.id)!;
    expect(page[0]).toEqual({
      id: first.id,
      status: first.status,
      executionStart: new Date(first.start).toISOString(),
      executionEnd: page[0]!.executionEnd,
      dryRun: false,
      workflowId: first.workflowId,
      workflowName: first.workflowId === workflows.nightly ? 'Nightly' : 'Hooked',
    });
  });

  it('narrows by status, one or several', async () => {
    expect(await listed({ status: ['Failed'] })).toEqual(expected((r) => r.status === 'Failed'));
    expect(await listed({ status: ['Failed', 'Canceled'] })).toEqual(
      expected((r) => r.status === 'Failed' || r.status === 'Canceled'),
    );
    expect(await listed({ status: ['Paused'] })).toEqual([]);
  });

  it('narrows by workflow, trigger, starter and start time, together too', async () => {
    expect(await listed({ workflowId: workflows.nightly })).toEqual(
      expected((r) => r.workflowId === workflows.nightly),
    );
    expect(await listed({ trigger: 'manual' })).toEqual(expected((r) => r.triggerId === null));
    expect(await listed({ trigger: 'TimeBased' })).toEqual(
      expected((r) => r.triggerId === triggers.schedule),
    );
    expect(await listed({ trigger: 'Webhook' })).toEqual(
      expected((r) => r.triggerId === triggers.hook),
    );
    expect(await listed({ trigger: triggers.hook.toUpperCase() })).toEqual(
      expected((r) => r.triggerId === triggers.hook),
    );
    expect(await listed({ startedBy: 'ann' })).toEqual(expected((r) => r.startedBy === 'ann'));
    const from = base + 3 * 60_000;
    const to = base + 7 * 60_000;
    expect(
      await listed({ from: new Date(from).toISOString(), to: new Date(to).toISOString() }),
    ).toEqual(expected((r) => r.start >= from && r.start < to));
    expect(
      await listed({
        status: ['Completed'],
        workflowId: workflows.hooked,
        startedBy: 'ann',
        from: new Date(from).toISOString(),
      }),
    ).toEqual(
      expected(
        (r) =>
          r.status === 'Completed' &&
          r.workflowId === workflows.hooked &&
          r.startedBy === 'ann' &&
          r.start >= from,
      ),
    );
  });

  it('pages with after, without duplicates or gaps, ties included, with and without filters', async () => {
    for (const pageSize of [1, 7, 39, 40, 100]) {
      expect(await pageThrough(explorer, {}, pageSize)).toEqual(expected());
    }
    expect(await pageThrough(explorer, { status: ['Completed', 'Running'] }, 3)).toEqual(
      expected((r) => r.status === 'Completed' || r.status === 'Running'),
    );
    const last = expected().at(-1)!;
    expect(await listed({ after: last })).toEqual([]);
  });

  it('never shows another project’s executions', async () => {
    const elsewhere = await trellis.admin.GET('/executions', { params: { query: {} } });
    const ids = new Set(elsewhere.map((item) => item.id));
    expect(seeded.filter((row) => ids.has(row.id))).toEqual([]);
    await expectFailure(
      trellis.admin.GET('/executions', { params: { query: { workflowId: workflows.nightly } } }),
      404,
      /Workflow .* was not found/,
    );
    await expectFailure(
      trellis.admin.GET('/executions', { params: { query: { after: seeded[0]!.id } } }),
      400,
      /query\.after: must be the id of an execution of this project/,
    );
    await expectFailure(
      explorer.GET('/executions', { params: { query: { after: randomUUID() } } }),
      400,
      /query\.after/,
    );
  });

  it('refuses a bad filter value with a 400 envelope naming it', async () => {
    const bad = (query: Record<string, unknown>) =>
      explorer.GET('/executions', { params: { query: query } });
    await expectFailure(bad({ status: ['Nope'] }), 400, /status/);
    await expectFailure(bad({ trigger: 'cron' }), 400, /trigger/);
    await expectFailure(bad({ from: 'yesterday' }), 400, /from/);
    await expectFailure(bad({ pageSize: 0 }), 400, /pageSize/);
    await expectFailure(
      bad({ from: '2026-11-21T00:00:00Z', to: '2026-11-20T00:00:00Z' }),
      400,
      /query\.from: must not be after `to`/,
    );
  });
});

const hour = 3_600_000;

describe('GET /executions/summary', () => {
  it('counts the range’s runs by hour and status, with the failure rate and the percentiles', async () => {
    const summary = await explorer.GET('/executions/summary', {
      params: {
        query: {
          from: new Date(base - 2 * hour + 30 * 60_000).toISOString(),
          to: new Date(base + 2 * hour).toISOString(),
          bucket: 'hour',
          failures: 3,
        },
      },
    });
    const count = (status: ExecutionStatus) => seeded.filter((r) => r.status === status).length;
    const counts = {
      pending: 0,
      running: count('Running'),
      paused: 0,
      completed: count('Completed'),
      failed: count('Failed'),
      canceled: count('Canceled'),
    };
    expect(summary.bucket).toBe('hour');
    // The first bucket starts on the hour before `from`.
    expect(summary.buckets.map((bucket) => bucket.start)).toEqual(
      [-2, -1, 0, 1].map((offset) => new Date(base + offset * hour).toISOString()),
    );
    expect(summary.buckets.map((bucket) => bucket.counts)).toEqual([
      { ...counts, running: 0, completed: 0, failed: 0, canceled: 0 },
      { ...counts, running: 0, completed: 0, failed: 0, canceled: 0 },
      counts,
      { ...counts, running: 0, completed: 0, failed: 0, canceled: 0 },
    ]);
    expect(summary.totals).toEqual(counts);
    const finished = seeded.filter((r) => r.status !== 'Running');
    expect(summary.failureRate).toBeCloseTo(count('Failed') / finished.length, 10);
    // Run i (from 0) took i + 1 seconds: percentiles of the finished ones, interpolated.
    const durations = seeded
      .map((row, index) => ({ row, ms: 1000 * (index + 1) }))
      .filter(({ row }) => row.status !== 'Running')
      .map(({ ms }) => ms)
      .sort((a, b) => a - b);
    const percentile = (p: number) => {
      const at = p * (durations.length - 1);
      const low = Math.floor(at);
      return durations[low]! + (at - low) * (durations[Math.ceil(at)]! - durations[low]!);
    };
    expect(summary.durationP50Ms).toBeCloseTo(percentile(0.5), 6);
    expect(summary.durationP95Ms).toBeCloseTo(percentile(0.95), 6);
    expect(summary.runningNow).toBe(count('Running'));
    expect(summary.pausedNow).toBe(0);
    expect(summary.approvalsWaiting).toBe(0);
    expect(summary.recentFailures.map((failure) => failure.id)).toEqual(
      expected((r) => r.status === 'Failed').slice(0, 3),
    );
    expect(summary.recentFailures[0]).toMatchObject({ taskName: null, message: '' });
  });

  it('buckets by day, and says nothing of an empty range but zeros', async () => {
    const summary = await explorer.GET('/executions/summary', {
      params: {
        query: {
          from: new Date(base - 3 * 24 * hour).toISOString(),
          to: new Date(base - 24 * hour).toISOString(),
          bucket: 'day',
        },
      },
    });
    expect(summary.buckets).toHaveLength(2);
    expect(summary.totals).toEqual({
      pending: 0,
      running: 0,
      paused: 0,
      completed: 0,
      failed: 0,
      canceled: 0,
    });
    expect(summary).toMatchObject({
      failureRate: null,
      durationP50Ms: null,
      durationP95Ms: null,
      recentFailures: [],
    });
  });

  it('refuses a range of more than 744 buckets, or one that ends before it starts', async () => {
    const summary = (query: Record<string, string>) =>
      explorer.GET('/executions/summary', { params: { query } });
    await expectFailure(
      summary({ from: '2026-01-01T00:00:00Z', to: '2026-03-01T00:00:00Z', bucket: 'hour' }),
      400,
      /at most 744/,
    );
    await expectFailure(
      summary({ from: '2026-03-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }),
      400,
      /query\.from: must be before `to`/,
    );
    await expectFailure(summary({ bucket: 'week' }), 400, /bucket/);
    // Two months by the day fit.
    const byDay = await explorer.GET('/executions/summary', {
      params: {
        query: { from: '2026-01-01T00:00:00Z', to: '2026-03-01T00:00:00Z', bucket: 'day' },
      },
    });
    expect(byDay.buckets).toHaveLength(59);
  });

  it('leaves dry runs out of every figure, counting them on their own; the list filters by dryRun', async () => {
    const project = await trellis.admin.POST('/projects', { body: { name: 'rehearsals' } });
    const rehearsals = clientIn(trellis, { basic: { ...users.admin } }, 'rehearsals');
    const { id: workflowId } = await rehearsals.POST('/workflows/Add', {
      body: { definition: simpleDefinition('Rehearsed') },
    });
    const start = Date.parse('2026-11-21T10:00:00Z');
    const seed = async (status: ExecutionStatus, dryRun: boolean, offsetMs: number) =>
      (
        await createExecutionWithTasks(trellis.db, {
          projectId: project.id,
          workflowId,
          workflowName: 'Rehearsed',
          definition: simpleDefinition('Rehearsed'),
          taskNames: [],
          temporalWorkflowId: `rehearsal-${randomUUID()}`,
          status,
          executionStart: new Date(start + offsetMs),
          executionEnd:
            status === 'Running' || status === 'Paused' ? null : new Date(start + offsetMs + 500),
          ...(dryRun ? { dryRun: {} } : {}),
        })
      ).execution.id;
    const real = await seed('Completed', false, 0);
    const dry = [
      await seed('Failed', true, 1000),
      await seed('Running', true, 2000),
      await seed('Paused', true, 3000),
      await seed('Completed', true, 4000),
    ];

    const summary = await rehearsals.GET('/executions/summary', {
      params: { query: { from: '2026-11-21T10:00:00Z', to: '2026-11-21T11:00:00Z' } },
    });
    expect(summary.totals).toEqual({
      pending: 0,
      running: 0,
      paused: 0,
      completed: 1,
      failed: 0,
      canceled: 0,
    });
    expect(summary.buckets.map((bucket) => bucket.counts.completed)).toEqual([1]);
    expect(summary).toMatchObject({
      failureRate: 0,
      durationP50Ms: 500,
      durationP95Ms: 500,
      runningNow: 0,
      pausedNow: 0,
      recentFailures: [],
      dryRuns: dry.length,
    });

    const list = async (dryRun?: boolean) =>
      (
        await rehearsals.GET('/executions', {
          params: { query: dryRun === undefined ? {} : { dryRun } },
        })
      ).map((item) => item.id);
    expect(await list(true)).toEqual([...dry].reverse());
    expect(await list(false)).toEqual([real]);
    expect(await list()).toEqual([...dry].reverse().concat(real));
    await expectFailure(
      rehearsals.GET('/executions', { params: { query: { dryRun: 'maybe' as never } } }),
      400,
      /dryRun/,
    );
  });

  it('sums up real runs: completed, a failed task with its message, an approval waiting', async () => {
    await trellis.admin.POST('/projects', { body: { name: 'overview' } });
    const overview = clientIn(trellis, { basic: { ...users.admin } }, 'overview');
    const run = async (def: object, until?: 'Paused') => {
      const { id: workflowId } = await overview.POST('/workflows/Add', {
        body: { definition: JSON.stringify(def) },
      });
      const { executionId } = await overview.POST('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
        body: { workflowId },
      });
      if (until) await approvalsOncePaused(overview, workflowId, executionId);
      else await overview.waitForExecution(workflowId, executionId, { timeoutMs: 60_000 });
      return { workflowId, executionId };
    };
    const since = new Date(Date.now() - 60_000).toISOString();
    const quick = () => definition([{ name: 'Quick', type: noop }]);
    await run(quick());
    await run(quick());
    server.script('/down', [{ status: 503, body: { down: true } }]);
    const failed = await run(
      definition([
        { name: 'Ready', type: noop },
        {
          name: 'Fetch',
          type: { plugin: 'Net/Http' },
          parameters: { url: `${server.url}/down` },
          dependencies: ['Ready'],
        },
      ]),
    );
    await run(
      definition([{ name: 'Gate', type: noop, manualApproval: { enabled: true } }]),
      'Paused',
    );

    const summary = await overview.GET('/executions/summary', {
      params: { query: { from: since } },
    });
    expect(summary.totals).toEqual({
      pending: 0,
      running: 0,
      paused: 1,
      completed: 2,
      failed: 1,
      canceled: 0,
    });
    expect(summary.buckets.reduce((sum, bucket) => sum + bucket.counts.completed, 0)).toBe(2);
    expect(summary.failureRate).toBeCloseTo(1 / 3, 10);
    expect(summary.durationP50Ms).toBeGreaterThan(0);
    expect(summary.durationP95Ms).toBeGreaterThanOrEqual(summary.durationP50Ms!);
    expect(summary).toMatchObject({ runningNow: 0, pausedNow: 1, approvalsWaiting: 1 });
    expect(summary.recentFailures).toHaveLength(1);
    expect(summary.recentFailures[0]).toMatchObject({
      id: failed.executionId,
      workflowId: failed.workflowId,
      taskName: 'Fetch',
      message: expect.stringMatching(/HTTP 503/),
    });
    // The seeded project's runs are not this one's, nor this one's there.
    const seededSide = await explorer.GET('/executions/summary', {
      params: { query: { from: since } },
    });
    expect(seededSide).toMatchObject({ pausedNow: 0, approvalsWaiting: 0, recentFailures: [] });
  }, 120_000);
});
