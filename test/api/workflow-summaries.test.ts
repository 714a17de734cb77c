import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFailure } from './api-error.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import { addWorkflow, definition, execute } from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

// A failing one fails its run by an output that cannot be evaluated.
const logs = (name: string, fail = false) =>
  definition([{ name: 'Say', type: { plugin: 'Flow/Log' }, parameters: { message: 'hi' } }], {
    name,
    ...(fail ? { outputs: { broken: "Outputs('Say').nothing - 1" } } : {}),
  });

describe('GET /workflow-summaries', () => {
  it('lists the workflows as GET /workflows does, with their latest runs, triggers and next firing', async () => {
    const busy = await addWorkflow(trellis.admin, logs('Summaries busy'));
    const quiet = await addWorkflow(trellis.admin, logs('Summaries quiet'));
    const runs: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const executionId = await execute(trellis.admin, busy);
      await trellis.admin.waitForExecution(busy, executionId);
      runs.push(executionId);
    }
    const daily = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId: busy } },
      body: { type: 'TimeBased', status: 'Active', properties: { cron: '30 6 * * *' } },
    });
    const paused = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId: busy } },
      body: { type: 'TimeBased', status: 'DeActive', properties: { cron: '* * * * *' } },
    });
    const hook = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId: busy } },
      body: { type: 'Webhook', status: 'Active', properties: { signature: 'None' } },
    });

    const listed = await trellis.admin.GET('/workflows', {});
    const summaries = await trellis.admin.GET('/workflow-summaries', {
      params: { query: { runs: 2 } },
    });
    // The list's own fields, in its order.
    expect(
      summaries.map(({ id, name, modifiedDate, revision }) => ({
        id,
        name,
        modifiedDate,
        revision,
      })),
    ).toEqual(listed);

    const busySummary = summaries.find((summary) => summary.id === busy)!;
    expect(busySummary.recentRuns.map((run) => [run.id, run.status])).toEqual([
      [runs[2], 'Completed'],
      [runs[1], 'Completed'],
    ]);
    const now = Date.now();
    const next = new Date(busySummary.nextFiring!);
    expect(next.getTime()).toBeGreaterThan(now - 1000);
    expect(next.getTime()).toBeLessThanOrEqual(now + 24 * 60 * 60_000);
    expect([next.getUTCHours(), next.getUTCMinutes()]).toEqual([6, 30]);
    expect(busySummary.triggers).toEqual([
      {
        id: daily.triggerId,
        type: 'TimeBased',
        status: 'Active',
        cron: '30 6 * * *',
        nextFiring: busySummary.nextFiring,
      },
      {
        id: paused.triggerId,
        type: 'TimeBased',
        status: 'DeActive',
        cron: '* * * * *',
        nextFiring: null,
      },
      { id: hook.triggerId, type: 'Webhook', status: 'Active', cron: null, nextFiring: null },
    ]);

    const quietSummary = summaries.find((summary) => summary.id === quiet)!;
    expect(quietSummary).toMatchObject({ recentRuns: [], triggers: [], nextFiring: null });
  });

  it('shows a failed run as failed, and pages as GET /workflows pages', async () => {
    const failing = await addWorkflow(trellis.admin, logs('Summaries failing', true));
    const executionId = await execute(trellis.admin, failing);
    await trellis.admin.waitForExecution(failing, executionId);
    const page = await trellis.admin.page('/workflow-summaries', {
      params: { query: { page: 1, pageSize: 1 } },
    });
    const listedPage = await trellis.admin.page('/workflows', {
      params: { query: { page: 1, pageSize: 1 } },
    });
    expect(page.pagination).toEqual(listedPage.pagination);
    expect(page.data.map((summary) => summary.id)).toEqual(listedPage.data.map((w) => w.id));

    const summaries = await trellis.admin.GET('/workflow-summaries', {});
    const failed = summaries.find((summary) => summary.id === failing)!;
    expect(failed.recentRuns.map((run) => run.status)).toEqual(['Failed']);
  });

  it('refuses a run count out of range', async () => {
    await expectFailure(
      trellis.admin.GET('/workflow-summaries', { params: { query: { runs: 51 } } }),
      400,
    );
  });
});
