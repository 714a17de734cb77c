/**
 * The web console in a real browser (headless Chromium) against a real Trellis with a worker,
 * PostgreSQL and Temporal, clicking what a person clicks: sign in, add a workflow with an approval
 * gate in the editor (problems shown before saving), start it from the form generated from its
 * inputs, watch its tasks turn Running then Completed on the graph without a reload, approve from
 * the inbox in another tab with a reason, and see the run complete on the first tab. Each page is
 * checked with axe-core (no serious or critical violation) and saved as a screenshot under
 * test-results/console/ (not in git); the page's Content-Security-Policy must never be violated.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { record, signIn, useConsoleSession } from './browser.js';

const temporalUi = 'http://127.0.0.1:8233';

const session = useConsoleSession({ worker: true, config: { Temporal: { UiUrl: temporalUi } } });

const openTab = (): Promise<Page> => session.openTab();

const suffix = Date.now().toString(36);
const workflowName = `ConsoleDemo-${suffix}`;

/** A wait, an approval gate, a conditional greeting and a handler for a rejection. */
function definition(firstDependency: string): string {
  return JSON.stringify(
    {
      name: workflowName,
      description: 'Waits, asks a person, then greets.',
      inputs: {
        who: { type: 'string', required: true, description: 'Whom to greet.' },
        greet: { type: 'boolean', default: true },
        delay: { type: 'integer', default: 1500, description: 'How long Wait waits (ms).' },
      },
      tasks: [
        {
          name: 'Wait',
          type: { plugin: 'Flow/Delay' },
          parameters: { milliseconds: "$[Inputs('delay')]" },
        },
        {
          name: 'Approve',
          type: { plugin: 'Flow/Log' },
          dependencies: [firstDependency],
          parameters: { message: 'approved' },
          manualApproval: {
            enabled: true,
            comment: 'Greet them?',
            inputs: { note: { type: 'string', required: true, description: 'A word for them.' } },
          },
        },
        {
          name: 'Greet',
          type: { plugin: 'Flow/Log' },
          dependencies: ['Approve'],
          executionCondition: { expression: "Inputs('greet')" },
          parameters: { message: "Hello, $[Inputs('who')]! $[Approval('Approve').inputs.note]" },
        },
        {
          name: 'Apologise',
          type: { plugin: 'Flow/Log' },
          runOnFailureOf: ['Approve'],
          parameters: { message: 'Not approved.' },
        },
      ],
    },
    null,
    2,
  );
}

const node = (page: Page, task: string) => page.locator(`g.node[data-task="${task}"]`);

describe('the console', () => {
  it('adds a workflow, runs it from its inputs, follows it live and approves it from the inbox', async () => {
    // Enough workflows for two pages, and one a search finds.
    for (let index = 1; index <= 22; index += 1) {
      await session.trellis.admin.POST('/workflows/Add', {
        body: {
          definition: {
            name: `Report-${suffix}-${String(index).padStart(2, '0')}`,
            tasks: [{ name: 'Note', type: { plugin: 'Flow/Log' }, parameters: { message: 'hi' } }],
          },
        },
      });
    }

    const page = await openTab();
    await page.goto(`${session.trellis.baseUrl}/ui`);
    await page.getByRole('heading', { name: 'Sign in to Trellis' }).waitFor();
    await signIn(page, 'not-the-password');
    await page.getByRole('alert').getByText('These credentials were not accepted').waitFor();
    await record(page, '01-sign-in');
    await signIn(page);

    // Home is the overview; the workflows are one link away: paged, searchable.
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page.locator('header').getByRole('link', { name: 'Workflows' }).click();
    await page.getByRole('heading', { name: 'Workflows', level: 1 }).waitFor();
    expect(page.url()).toBe(`${session.trellis.baseUrl}/ui/workflows`);
    await page.getByText(/Page 1 of 2/).waitFor();
    await record(page, '02-workflows');
    await page.getByLabel('Search by name').fill(`Report-${suffix}-07`);
    await page.getByText('1 item', { exact: true }).waitFor();
    expect(await page.locator('tbody tr').allTextContents()).toEqual([
      expect.stringContaining(`Report-${suffix}-07`),
    ]);

    // The editor shows problems before anything is saved, then saves.
    await page.getByRole('link', { name: 'New workflow' }).click();
    const editor = page.getByLabel('Definition (JSON)');
    await editor.fill(definition('Wiat'));
    const problemsBox = page.locator('#definition-problems');
    await problemsBox.getByText('names no task: "Wiat"').waitFor();
    const line =
      definition('Wiat')
        .split('\n')
        .findIndex((text) => text.includes('"Wiat"')) + 1;
    await expect(problemsBox.textContent()).resolves.toMatch(
      new RegExp(`Line ${line}\\s*tasks\\[1\\]\\.dependencies\\[0\\]`),
    );
    await record(page, '03-editor-problems');
    await page.getByRole('button', { name: 'Add workflow' }).click();
    expect(page.url(), 'nothing is saved while there are problems').toBe(
      `${session.trellis.baseUrl}/ui/workflows/new`,
    );
    await editor.fill(definition('Wait'));
    await problemsBox.getByText('No problems found.').waitFor();
    await page.getByRole('button', { name: 'Add workflow' }).click();

    // The workflow: its DAG, with the gate, the condition and the failure edge told apart.
    await page.getByRole('heading', { name: workflowName, level: 1 }).waitFor();
    await expect(node(page, 'Approve').getAttribute('class')).resolves.toContain('node-approval');
    await expect(node(page, 'Greet').getAttribute('class')).resolves.toContain('node-conditional');
    await expect(node(page, 'Wait').getAttribute('class')).resolves.toContain('node-plugin');
    expect(await page.locator('path.edge-failure[data-edge="Approve->Apologise"]').count()).toBe(1);
    expect(await page.locator('path.edge-dependency').count()).toBe(2);
    await page.getByText('None: runs start here').waitFor();
    await record(page, '04-workflow');

    // A change is a new revision; the earlier one can still be drawn.
    await page.getByRole('link', { name: 'Edit definition' }).click();
    await editor.waitFor();
    // The stored text (its first lines: the editor draws only what is in view).
    await editor.getByText(`"${workflowName}"`).waitFor();
    await editor.fill(definition('Wait').replace('then greets.', 'then greets them.'));
    await problemsBox.getByText('No problems found.').waitFor();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Waits, asks a person, then greets them.').waitFor();
    await page.getByRole('heading', { name: `${workflowName} revision 2`, level: 1 }).waitFor();
    const revisions = page
      .locator('section')
      .filter({ has: page.getByRole('heading', { name: 'Revisions' }) });
    await revisions.getByRole('button', { name: 'Show revision 1' }).waitFor();
    await expect(revisions.locator('tbody tr').allTextContents()).resolves.toEqual([
      expect.stringMatching(new RegExp(`^2 current${workflowName}`)),
      expect.stringMatching(new RegExp(`^1 ${workflowName}`)),
    ]);
    await revisions.getByRole('button', { name: 'Show revision 1' }).click();
    await revisions.getByRole('heading', { name: 'Revision 1' }).waitFor();
    expect(await revisions.locator('g.node').count()).toBe(4);
    // Beside it, its changes to the current revision: the description's line.
    const changed = revisions.locator('.cm-changedLine');
    await changed.first().waitFor();
    await expect(changed.allTextContents()).resolves.toEqual([
      expect.stringContaining('then greets."'),
      expect.stringContaining('then greets them."'),
    ]);
    await record(page, 'revision-changes');

    // The run form, from the declared inputs: a required one is checked before sending.
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.getByText('who is required').waitFor();
    await expect(page.getByLabel(/^delay/).inputValue()).resolves.toBe('1500');
    await page.getByLabel(/^who/).fill('console');
    await page.getByRole('button', { name: 'Start run' }).click();

    // The run, live: the same page all along (a reload would lose this mark).
    await page.getByRole('heading', { name: /^Run / }).waitFor();
    await page.getByText(/^Revision 2 · Started/).waitFor();
    const runUrl = page.url();
    const executionId = runUrl.split('/').at(-1)!;
    await page.evaluate(
      () => ((globalThis as unknown as { stillTheSamePage: boolean }).stillTheSamePage = true),
    );
    await node(page, 'Wait').and(page.locator('[data-status="Running"]')).waitFor();
    await node(page, 'Wait').and(page.locator('[data-status="Completed"]')).waitFor();
    await node(page, 'Approve').and(page.locator('[data-status="WaitingForApproval"]')).waitFor();
    await page.getByRole('heading', { name: 'Waiting for a decision' }).waitFor();
    await expect(
      page.getByRole('link', { name: 'Open in Temporal UI' }).getAttribute('href'),
    ).resolves.toBe(`${temporalUi}/namespaces/default/workflows/trellis-execution-${executionId}`);
    await record(page, '05-run-waiting');

    // The inbox, in another tab (its own sign-in: credentials stay in their tab).
    const inbox = await openTab();
    await inbox.goto(`${session.trellis.baseUrl}/ui/approvals`);
    await signIn(inbox);
    await inbox.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
    const card = inbox.locator('li.card').filter({ hasText: workflowName });
    await card.getByText('Greet them?').waitFor();
    await expect(card.textContent()).resolves.toMatch(
      new RegExp(`Approve in ${workflowName}Run ${executionId.slice(0, 8)} · waiting`),
    );
    await record(inbox, '06-approvals');
    // The gate's form, from its declared inputs: what the person enters, a later task reads.
    await card.getByLabel(/^note/).fill('Welcome aboard.');
    await card.getByLabel('Reason for Approve').fill('Looks right.');
    await card.getByRole('button', { name: 'Approve' }).click();
    await inbox.getByRole('status').getByText(`Approved Approve of ${workflowName}.`).waitFor();
    await inbox.getByText('Nothing waits for a decision.').waitFor();
    await inbox.close();

    // Back on the first tab, which followed the decision without a reload.
    await node(page, 'Greet').and(page.locator('[data-status="Completed"]')).waitFor();
    await node(page, 'Apologise').and(page.locator('[data-status="Skipped"]')).waitFor();
    await page.locator('h1 .badge[data-status="Completed"]').waitFor();
    await page.locator('.timeline').getByText('Approved by admin: Looks right.').waitFor();
    await page.locator('.timeline').getByText('Hello, console! Welcome aboard.').waitFor();
    expect(page.url()).toBe(runUrl);
    expect(
      await page.evaluate(
        () => (globalThis as unknown as { stillTheSamePage?: boolean }).stillTheSamePage,
      ),
    ).toBe(true);
    const waitRow = page.locator('tr[data-task-row="Wait"]');
    await expect(waitRow.textContent()).resolves.toMatch(/Wait\s*Completed\s*1/);
    // A task's details: its output.
    await node(page, 'Wait').focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Task Wait' }).waitFor();
    await page.locator('.panel pre.json').getByText('"delayedMilliseconds": 1500').waitFor();
    await record(page, '07-run-completed');

    // At phone width: nothing wider than the screen but the graph, which scrolls in its box.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('heading', { name: 'Task Wait' }).waitFor();
    const pageWidth = await page.evaluate<number>('document.documentElement.scrollWidth');
    expect(pageWidth).toBeLessThanOrEqual(390);
    await record(page, '08-run-phone');

    // Rerun from a task: a new run, which waits for the gate again; cancel it.
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole('button', { name: 'Rerun from Wait' }).click();
    await page.waitForURL((url) => url.href !== runUrl && url.pathname.includes('/runs/'));
    await node(page, 'Approve').and(page.locator('[data-status="WaitingForApproval"]')).waitFor();
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByRole('button', { name: 'Yes, cancel the run' }).click();
    await page.locator('h1 .badge[data-status="Canceled"]').waitFor();
    await node(page, 'Greet').and(page.locator('[data-status="Canceled"]')).waitFor();
    const rerunOf = page.getByRole('link', { name: executionId.slice(0, 8) });
    await expect(rerunOf.getAttribute('href')).resolves.toBe(new URL(runUrl).pathname);

    expect(session.problems).toEqual([]);
    await page.close();
  });

  it('shows how runs go on the overview, and finds the failed ones in the executions explorer', async () => {
    const admin = session.trellis.admin;
    const add = async (name: string, tasks: object[]) =>
      (
        await admin.POST('/workflows/Add', {
          body: { definition: JSON.stringify({ name, tasks }) },
        })
      ).id;
    const start = async (workflowId: string) =>
      (
        await admin.POST('/workflows/{workflowId}/executions', {
          params: { path: { workflowId } },
          body: { workflowId },
        })
      ).executionId;
    // A call the network fence refuses (loopback): the task fails with the fence's message.
    const fetching = await add(`Fetching-${suffix}`, [
      { name: 'Fetch', type: { plugin: 'Net/Http' }, parameters: { url: 'http://127.0.0.1:9/' } },
    ]);
    const failedRun = await start(fetching);
    await admin.waitForExecution(fetching, failedRun, { timeoutMs: 60_000 });
    const gated = await add(`Gated-${suffix}`, [
      { name: 'Gate', type: { plugin: 'Flow/NoOp' }, manualApproval: { enabled: true } },
    ]);
    const pausedRun = await start(gated);
    await admin.waitForExecution(gated, pausedRun, { until: ['Paused'], timeoutMs: 20_000 });

    const page = await openTab();
    await page.goto(`${session.trellis.baseUrl}/ui`);
    await signIn(page);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    const figure = (name: string) =>
      page
        .locator('.figure')
        .filter({ has: page.getByText(name, { exact: true }) })
        .locator('dd');
    await expect(figure('Waiting for approval now').textContent()).resolves.toBe('1');
    await expect(figure('Approvals waiting').textContent()).resolves.toBe('1');
    await expect(figure('Running now').textContent()).resolves.toBe('0');
    // The earlier test's runs (one completed, one canceled) and these two.
    await expect(figure('Runs').textContent()).resolves.toBe('4');
    await expect(figure('Failure rate').textContent()).resolves.toBe('33.3 %');
    await expect(figure('Duration p50').textContent()).resolves.toMatch(/\d/);
    expect(await page.locator('.chart canvas').count()).toBeGreaterThanOrEqual(2);
    await page
      .getByRole('img', { name: /^Runs per hour by status: 1 completed, 1 failed/ })
      .waitFor();
    const failure = page.locator(`.failures li[data-execution="${failedRun}"]`);
    await expect(failure.textContent()).resolves.toMatch(/Task Fetch: .+/);
    await record(page, '09-overview');
    await page.setViewportSize({ width: 390, height: 844 });
    const phoneWidth = await page.evaluate<number>('document.documentElement.scrollWidth');
    expect(phoneWidth).toBeLessThanOrEqual(390);
    await record(page, '10-overview-phone');
    await page.setViewportSize({ width: 1280, height: 900 });
    await figure('Approvals waiting').getByRole('link').click();
    await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
    await page.goBack();
    await failure.getByRole('link').click();
    await page.getByRole('heading', { name: /^Run / }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/ui/workflows/${fetching}/runs/${failedRun}`);

    // The explorer: every run of the project, then only the failed ones.
    await page.locator('header').getByRole('link', { name: 'Executions' }).click();
    await page.getByRole('heading', { name: 'Executions', level: 1 }).waitFor();
    await page.locator('tr[data-execution]').nth(3).waitFor();
    expect(await page.locator('tr[data-execution]').count()).toBe(4);
    await page.getByRole('checkbox', { name: 'Failed' }).check();
    await page.getByRole('button', { name: 'Show runs' }).click();
    await page.locator('tr[data-execution]').nth(1).waitFor({ state: 'detached' });
    await expect(page.locator('tbody tr').allTextContents()).resolves.toEqual([
      expect.stringMatching(new RegExp(`Run ${failedRun.slice(0, 8)}Fetching-${suffix}Failed`)),
    ]);
    await page.getByText('The oldest run is shown.').waitFor();
    await record(page, '11-executions-failed');
    // Bulk rerun of every failure the filter matches: a preview (how many, which, which
    // revision), then the rerun, each run's result linking to its new run.
    await page.getByRole('button', { name: 'Select all matching the filter' }).click();
    await page.getByText('Every run matching the filter is selected.').waitFor();
    await page.getByRole('button', { name: 'Rerun…' }).click();
    const bulk = page.locator('section.bulk-action');
    await bulk.getByText('1 run would be rerun.').waitFor();
    await expect(
      bulk.locator(`tr[data-bulk-execution="${failedRun}"]`).textContent(),
    ).resolves.toBe(`Run ${failedRun.slice(0, 8)}Fetching-${suffix}FailedWould be rerun1`);
    await record(page, '12-executions-bulk-rerun-preview');
    await page.getByRole('button', { name: 'Yes, rerun 1 run' }).click();
    await bulk.getByText('1 run was rerun.').waitFor();
    const rerunLink = bulk
      .locator(`tr[data-bulk-execution="${failedRun}"] td`)
      .last()
      .getByRole('link');
    const rerunId = (await rerunLink.getAttribute('href'))!.split('/').at(-1)!;
    const rerun = await admin.waitForExecution(fetching, rerunId, { timeoutMs: 60_000 });
    expect(rerun).toMatchObject({ status: 'Failed', rerunOf: failedRun, revision: 1 });
    await record(page, '13-executions-bulk-rerun-done');
    await bulk.getByRole('button', { name: 'Close' }).click();
    // Failed again (the fence still refuses the call): the failures are now the rerun and its original.
    await page.getByRole('button', { name: 'Show runs' }).click();
    await page.locator(`tr[data-execution="${rerunId}"]`).waitFor();
    expect(await page.locator('tr[data-execution]').count()).toBe(2);
    await page.getByLabel('Workflow').selectOption({ label: `Gated-${suffix}` });
    await page.getByRole('checkbox', { name: 'Failed' }).uncheck();
    await page.getByRole('button', { name: 'Show runs' }).click();
    await page.locator(`tr[data-execution="${pausedRun}"]`).waitFor();
    expect(await page.locator('tr[data-execution]').count()).toBe(1);
    await page.getByRole('link', { name: `Run ${pausedRun.slice(0, 8)}` }).click();
    await page.getByRole('heading', { name: 'Waiting for a decision' }).waitFor();

    expect(session.problems).toEqual([]);
    await page.close();
  });
});
