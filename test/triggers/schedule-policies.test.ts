import { Cron } from 'croner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleId } from '#protocol/ids.js';
import { expectFailure } from '../api/api-error.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import { addWorkflow, definition, delay, eventually, noop } from '../support/engine-support.js';

let trellis: Trellis;
/** Every TimeBased trigger made here: their schedules go when the file ends. */
const made: string[] = [];
beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  for (const triggerId of made) {
    await trellis.temporal.client.schedule
      .getHandle(scheduleId(triggerId))
      .delete()
      .catch(() => undefined);
  }
  await trellis?.stop();
});

type Properties = Record<string, unknown>;

async function timeBased(
  workflowId: string,
  properties: Properties,
  status: 'Active' | 'DeActive' = 'Active',
) {
  const { triggerId } = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
    params: { path: { workflowId } },
    body: { workflowId, type: 'TimeBased', status, properties },
  });
  made.push(triggerId);
  return triggerId;
}

const describeSchedule = (triggerId: string) =>
  trellis.temporal.client.schedule.getHandle(scheduleId(triggerId)).describe();

function backfill(
  workflowId: string,
  triggerId: string,
  body: { from: string; to: string; overlap?: 'Skip' | 'AllowAll' | 'BufferAll' | 'BufferOne' },
) {
  return trellis.admin.envelope.POST('/workflows/{workflowId}/triggers/{triggerId}/backfill', {
    params: { path: { workflowId, triggerId } },
    body,
  });
}

/** Ten minutes ending on a whole ten minutes, at least an hour ago (no real firing there). */
function pastTenMinutes(hoursAgo: number): { from: string; to: string } {
  const to = new Date(Date.now() - hoursAgo * 3_600_000);
  to.setUTCMinutes(Math.floor(to.getUTCMinutes() / 10) * 10, 0, 0);
  return { from: new Date(to.getTime() - 600_000).toISOString(), to: to.toISOString() };
}

interface Run {
  id: string;
  status: string;
  executionStart: string;
  executionEnd: string | null;
  /** The firing time the schedule started it for (Temporal appends it to the workflow id). */
  firedFor: string;
}

/** The trigger's runs for firings within [from, to), a real firing of the schedule left out. */
async function runsIn(workflowId: string, range: { from: string; to: string }): Promise<Run[]> {
  const rows = await trellis.db
    .selectFrom('workflowExecution')
    .select(['id', 'status', 'executionStart', 'executionEnd', 'temporalWorkflowId'])
    .where('workflowId', '=', workflowId)
    .execute();
  return rows
    .map((row) => ({
      id: row.id,
      status: row.status,
      executionStart: row.executionStart.toISOString(),
      executionEnd: row.executionEnd?.toISOString() ?? null,
      firedFor: new Date(
        /-(\d{4}-\d\d-\d\dT[\d:]+Z)$/.exec(row.temporalWorkflowId)![1]!,
      ).toISOString(),
    }))
    .filter((run) => run.firedFor >= range.from && run.firedFor < range.to)
    .sort((a, b) => a.executionStart.localeCompare(b.executionStart));
}

/** Whether any two runs were running at the same time. */
function overlapping(runs: Run[]): boolean {
  return runs.some((a, i) =>
    runs.some(
      (b, j) =>
        i !== j &&
        a.executionStart < (b.executionEnd ?? '9') &&
        b.executionStart < (a.executionEnd ?? '9'),
    ),
  );
}

describe('schedule policies of TimeBased triggers', () => {
  it('passes overlap, catch-up window and jitter to the Temporal schedule (defaults: Skip, 1m, none)', async () => {
    const workflowId = await addWorkflow(trellis.admin, definition([{ name: 'A', type: noop }]));
    const defaults = await describeSchedule(await timeBased(workflowId, { cron: '0 3 * * *' }));
    expect(defaults.policies).toMatchObject({ overlap: 'SKIP', catchupWindow: 60_000 });
    expect(defaults.spec.jitter ?? 0).toBe(0);

    const triggerId = await timeBased(workflowId, {
      cron: '0 3 * * *',
      overlap: 'BufferOne',
      catchupWindow: '1h30m',
      jitter: '45s',
    });
    const chosen = await describeSchedule(triggerId);
    expect(chosen.policies).toMatchObject({ overlap: 'BUFFER_ONE', catchupWindow: 5_400_000 });
    expect(chosen.spec.jitter).toBe(45_000);

    // An update follows; a policy left out goes back to its default.
    await trellis.admin.PUT('/workflows/{workflowId}/triggers/{triggerId}', {
      params: { path: { workflowId, triggerId } },
      body: {
        workflowId,
        triggerId,
        type: 'TimeBased',
        status: 'Active',
        properties: { cron: '0 3 * * *', overlap: 'AllowAll' },
      },
    });
    const updated = await describeSchedule(triggerId);
    expect(updated.policies).toMatchObject({ overlap: 'ALLOW_ALL', catchupWindow: 60_000 });
  });

  it('refuses policies it cannot pass on (400 naming each), creating nothing', async () => {
    const workflowId = await addWorkflow(trellis.admin, definition([{ name: 'A', type: noop }]));
    const create = (properties: Record<string, unknown>) =>
      trellis.admin.POST('/workflows/{workflowId}/triggers', {
        params: { path: { workflowId } },
        body: { workflowId, type: 'TimeBased', status: 'Active', properties } as never,
      });
    // What the contract states (an overlap policy, the form of a duration) is refused by its
    // validation; what it cannot (a duration's range) by the trigger's own checks.
    const malformed = await expectFailure(
      create({ cron: '0 3 * * *', overlap: 'Sometimes', catchupWindow: '5s', jitter: '1 minute' }),
      400,
    );
    expect(malformed.messages).toEqual([
      'body.properties.overlap: must be one of "Skip", "BufferOne", "BufferAll", "CancelOther", "TerminateOther", "AllowAll"',
      'body.properties.jitter: must be a duration such as "30s", "5m", "1h30m" or "2d" (largest unit first)',
    ]);
    const outOfRange = await expectFailure(
      create({ cron: '0 3 * * *', catchupWindow: '5s', jitter: '367d' }),
      400,
    );
    expect(outOfRange.messages).toEqual([
      'body.properties.catchupWindow: must be from 10s to 366d, got "5s"',
      'body.properties.jitter: must be from 0s to 366d, got "367d"',
    ]);
    expect(
      await trellis.admin.GET('/workflows/{workflowId}/triggers', {
        params: { path: { workflowId } },
      }),
    ).toEqual([]);
  });
});

describe('backfill', () => {
  it('runs the 5 firings of */2 * * * * in ten minutes, one after another by default', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Tick', ...delay(700) }]),
    );
    const triggerId = await timeBased(workflowId, { cron: '*/2 * * * *' });
    const range = pastTenMinutes(2);
    const answer = await backfill(workflowId, triggerId, range);
    const start = Date.parse(range.from);
    const expected = [0, 2, 4, 6, 8].map((minutes) =>
      new Date(start + minutes * 60_000).toISOString(),
    );
    expect(answer.data).toEqual({ triggerId, ...range, overlap: 'BufferAll', times: expected });
    expect(answer.messages).toEqual([
      `Backfill of 5 firings of trigger "${triggerId}" (overlap BufferAll) was requested.`,
    ]);

    const runs = await eventually(async () => {
      const found = await runsIn(workflowId, range);
      expect(found.map((run) => run.status)).toEqual(Array(5).fill('Completed'));
      return found;
    }, 30_000);
    expect(runs.map((run) => run.firedFor)).toEqual(expected);
    expect(overlapping(runs)).toBe(false);

    // A firing time runs once: the same backfill again starts nothing more.
    const again = await backfill(workflowId, triggerId, { ...range, overlap: 'AllowAll' });
    expect(again.data.times).toEqual(expected);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await runsIn(workflowId, range)).map((run) => run.id)).toEqual(
      runs.map((run) => run.id),
    );
  });

  it('never runs two at once with overlap Skip, where AllowAll runs them all together', async () => {
    // Each run lasts longer than the backfill takes to hand its firings over.
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Slow', ...delay(3000) }]),
    );
    const triggerId = await timeBased(workflowId, { cron: '*/2 * * * *', overlap: 'Skip' });

    const skipRange = pastTenMinutes(3);
    await backfill(workflowId, triggerId, { ...skipRange, overlap: 'Skip' });
    const [only] = await eventually(async () => {
      const found = await runsIn(workflowId, skipRange);
      expect(found.map((run) => run.status)).toEqual(['Completed']);
      return found;
    }, 30_000);
    // The other four were skipped, not queued: none starts after the first has ended.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await runsIn(workflowId, skipRange)).toEqual([only]);
    expect(
      (await describeSchedule(triggerId)).info.numActionsSkippedOverlap,
    ).toBeGreaterThanOrEqual(4);

    const allRange = pastTenMinutes(4);
    await backfill(workflowId, triggerId, { ...allRange, overlap: 'AllowAll' });
    const all = await eventually(async () => {
      const found = await runsIn(workflowId, allRange);
      expect(found.map((run) => run.status)).toEqual(Array(5).fill('Completed'));
      return found;
    }, 30_000);
    expect(overlapping(all)).toBe(true);
  });

  it('refuses what it cannot backfill: 400 for a bad range, 409 for a trigger without an active schedule', async () => {
    const workflowId = await addWorkflow(trellis.admin, definition([{ name: 'A', type: noop }]));
    const everyMinute = await timeBased(workflowId, { cron: '* * * * *' });
    const yearly = await timeBased(workflowId, { cron: '0 0 1 1 *' });
    const paused = await timeBased(workflowId, { cron: '* * * * *' }, 'DeActive');
    const { triggerId: manual } = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      body: { workflowId, type: 'Manual', status: 'Active', properties: {} },
    });
    const range = pastTenMinutes(2);
    const reversed = { from: range.to, to: range.from };
    await expectFailure(
      backfill(workflowId, everyMinute, reversed),
      400,
      'body.to: must be after body.from',
    );
    const future = { from: range.from, to: new Date(Date.now() + 3_600_000).toISOString() };
    await expectFailure(
      backfill(workflowId, everyMinute, future),
      400,
      'body.to: must not be in the future',
    );
    const day = { from: new Date(Date.parse(range.to) - 86_400_000).toISOString(), to: range.to };
    await expectFailure(backfill(workflowId, everyMinute, day), 400, /more than 500 times/);
    await expectFailure(backfill(workflowId, yearly, range), 400, /has no firing between/);
    await expectFailure(
      backfill(workflowId, everyMinute, { from: 'yesterday', to: range.to }),
      400,
      'body.from',
    );
    const inactive = await expectFailure(backfill(workflowId, paused, range), 409, /DeActive/);
    expect(inactive.codes).toEqual(['trigger.inactive']);
    const notTimeBased = await expectFailure(
      backfill(workflowId, manual, range),
      409,
      /Manual trigger/,
    );
    expect(notTimeBased.codes).toEqual(['trigger.not_time_based']);
    await expectFailure(backfill(workflowId, '00000000-0000-4000-8000-000000000000', range), 404);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // The every-minute schedule is live: a run it starts at a minute's turn is not a backfill's.
    const started = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    const atMinuteTurn = (iso: string | null | undefined) =>
      iso != null && Date.parse(iso) % 60_000 < 5_000;
    expect(started.filter((execution) => !atMinuteTurn(execution.executionStart))).toEqual([]);
    for (const triggerId of [everyMinute, yearly, paused]) {
      await trellis.admin.DELETE('/workflows/{workflowId}/triggers/{triggerId}', {
        params: { path: { workflowId, triggerId } },
      });
    }
  });
});

describe('upcoming', () => {
  it("previews the next firing times in the trigger's time zone", async () => {
    const workflowId = await addWorkflow(trellis.admin, definition([{ name: 'A', type: noop }]));
    const triggerId = await timeBased(workflowId, {
      cron: '30 6 * * 1-5',
      timezone: 'Europe/Paris',
    });
    const upcoming = (count?: number) =>
      trellis.admin.GET('/workflows/{workflowId}/triggers/{triggerId}/upcoming', {
        params: { path: { workflowId, triggerId }, query: count === undefined ? {} : { count } },
      });
    // Computed independently: weekdays at 06:30 Paris time (croner, days ANDed as Temporal does).
    const expected = new Cron('30 6 * * 1-5', { timezone: 'Europe/Paris', domAndDow: true })
      .nextRuns(10)
      .map((date) => date.toISOString());
    expect(await upcoming(3)).toEqual({ triggerId, paused: false, times: expected.slice(0, 3) });
    expect((await upcoming()).times).toEqual(expected.slice(0, 5));
    expect((await upcoming(10)).times).toEqual(expected);
    await expectFailure(upcoming(11), 400, 'query.count');
    await expectFailure(upcoming(0), 400, 'query.count');
  });

  it('shows nothing coming for a DeActive trigger, and 409 for one without a schedule', async () => {
    const workflowId = await addWorkflow(trellis.admin, definition([{ name: 'A', type: noop }]));
    const paused = await timeBased(workflowId, { cron: '0 6 * * *' }, 'DeActive');
    const answer = await trellis.admin.envelope.GET(
      '/workflows/{workflowId}/triggers/{triggerId}/upcoming',
      { params: { path: { workflowId, triggerId: paused } } },
    );
    expect(answer.data).toEqual({ triggerId: paused, paused: true, times: [] });
    expect(answer.messages).toEqual([
      'The trigger is DeActive: nothing fires until it is Active again.',
    ]);
    const { triggerId: hook } = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      body: { workflowId, type: 'Webhook', status: 'Active', properties: { signature: 'None' } },
    });
    const error = await expectFailure(
      trellis.admin.GET('/workflows/{workflowId}/triggers/{triggerId}/upcoming', {
        params: { path: { workflowId, triggerId: hook } },
      }),
      409,
      /Webhook trigger/,
    );
    expect(error.codes).toEqual(['trigger.not_time_based']);
  });

  it('makes a schedule Temporal lost again before answering', async () => {
    const workflowId = await addWorkflow(trellis.admin, definition([{ name: 'A', type: noop }]));
    const triggerId = await timeBased(workflowId, { cron: '15 4 * * *' });
    await trellis.temporal.client.schedule.getHandle(scheduleId(triggerId)).delete();
    const { times } = await trellis.admin.GET(
      '/workflows/{workflowId}/triggers/{triggerId}/upcoming',
      { params: { path: { workflowId, triggerId }, query: { count: 1 } } },
    );
    expect(new Date(times[0]!).toISOString()).toMatch(/T04:15:00\.000Z$/);
    expect((await describeSchedule(triggerId)).policies.overlap).toBe('SKIP');
  });
});
