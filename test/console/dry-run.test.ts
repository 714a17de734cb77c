/**
 * A dry run in the console (real Chromium, real Trellis): its run page and the workflow's list
 * of runs carry a "Dry run" badge; a real run's do not. Its run page shows the plan as it ran:
 * each task's source of output (a mock, a recorded output, a generated one, or run for real), the
 * plugin it did not run, its resolved parameters, the approvals that would be asked and the
 * branches skipped. A new workflow's test run opens too, its workflow named as not stored.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loopbackAllowed } from '../support/harness.js';
import { startRecordingReceiver } from '../support/recording-receiver.js';
import { record, signIn, useConsoleSession } from './browser.js';

/** Where the HTTP tasks point, and the paths they reached. */
const receiver = await startRecordingReceiver({ n: 1 });
const { origin, received } = receiver;
afterAll(() => receiver.close());

const session = useConsoleSession({ worker: true, config: loopbackAllowed });

describe('a dry run in the console', () => {
  it('is marked "Dry run" on its page and in the list of runs, and a real run is not', async () => {
    const { trellis } = session;
    const { id: workflowId } = await trellis.admin.POST('/workflows/Add', {
      body: {
        definition: JSON.stringify({
          name: `Dry-${Date.now().toString(36)}`,
          tasks: [{ name: 'Say', type: { plugin: 'Flow/Log' }, parameters: { message: 'hi' } }],
        }),
      },
    });
    const run = (dryRun: boolean) =>
      trellis.admin.POST('/workflows/{workflowId}/executions', {
        params: { path: { workflowId }, query: { waitSeconds: 30 } },
        body: dryRun ? { dryRun: true } : {},
      });
    const dry = await run(true);
    const real = await run(false);

    const page = await session.openTab();
    await page.goto(`${trellis.baseUrl}/ui/workflows/${workflowId}`);
    await signIn(page);
    const rows = page.locator('tr', { hasText: 'Dry run' });
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    await expect(rows.first().textContent()).resolves.toContain(dry.executionId.slice(0, 8));

    const heading = page.getByRole('heading', { level: 1 });
    await page.getByRole('link', { name: dry.executionId.slice(0, 8) }).click();
    await heading.getByText(dry.executionId.slice(0, 8)).waitFor();
    await heading.getByText('Dry run', { exact: true }).waitFor();

    await page.goBack();
    await page.getByRole('link', { name: real.executionId.slice(0, 8) }).click();
    await heading.getByText(real.executionId.slice(0, 8)).waitFor();
    await heading.getByText('Completed').waitFor();
    expect(await heading.getByText('Dry run', { exact: true }).count()).toBe(0);
  });

  it('shows the plan as it ran: each task’s source of output, what it did not run, its parameters, the approvals and skipped branches', async () => {
    const { trellis } = session;
    const name = `Plan-${Date.now().toString(36)}`;
    const fetchTask = {
      name: 'Fetch',
      type: { plugin: 'Net/Http' },
      parameters: { url: `${origin}/orders`, method: 'GET' },
    };
    const post = (dependencies: string[]) => ({
      name: 'Post',
      type: { plugin: 'Net/Http' },
      dependencies,
      parameters: {
        url: `${origin}/post`,
        method: 'POST',
        body: { n: "$[Outputs('Fetch').body.n]" },
      },
    });
    const { id: workflowId } = await trellis.admin.POST('/workflows/Add', {
      body: { definition: JSON.stringify({ name, tasks: [fetchTask, post(['Fetch'])] }) },
    });
    // A real run first: the dry run takes Post's output from it.
    const real = await trellis.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId }, query: { waitSeconds: 60 } },
      body: {},
    });
    expect(real.status).toBe('Completed');
    await trellis.admin.PUT('/workflows/{workflowId}', {
      params: { path: { workflowId } },
      body: {
        workflowId,
        definition: JSON.stringify({
          name,
          tasks: [
            fetchTask,
            {
              name: 'Approve',
              type: { plugin: 'Flow/NoOp' },
              dependencies: ['Fetch'],
              manualApproval: { enabled: true, comment: 'Send the order?' },
            },
            post(['Approve']),
            {
              name: 'Notify',
              type: { plugin: 'Net/Http' },
              dependencies: ['Post'],
              parameters: { url: `${origin}/notify` },
            },
            {
              name: 'Digest',
              type: { plugin: 'Security/Hash' },
              dependencies: ['Post'],
              parameters: { algorithm: 'sha256', input: 'order' },
            },
            {
              name: 'Never',
              type: { plugin: 'Flow/NoOp' },
              dependencies: ['Post'],
              executionCondition: { expression: "Outputs('Post').status > 999" },
            },
          ],
        }),
      },
    });
    const before = received.length;
    const dry = await trellis.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId }, query: { waitSeconds: 60 } },
      body: {
        dryRun: true,
        mocks: {
          Fetch: {
            status: 200,
            statusText: 'OK',
            ok: true,
            url: 'mocked',
            headers: {},
            body: { n: 7 },
          },
        },
      },
    });
    expect(dry.status).toBe('Completed');
    expect(received.slice(before)).toEqual([]);

    const page = await session.openTab();
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.goto(`${trellis.baseUrl}/ui/workflows/${workflowId}/runs/${dry.executionId}`);
    await signIn(page);
    const plan = page.getByRole('region', { name: 'Dry run plan' });
    await plan.waitFor();
    const row = (task: string) => plan.locator(`tr[data-plan-row="${task}"]`);
    const cells = async (task: string) =>
      (await row(task).locator('td').allTextContents()).slice(0, 2).map((text) => text.trim());
    await row('Never').getByText('Skipped').first().waitFor();
    await expect(cells('Fetch')).resolves.toEqual([
      'Mock from the request',
      'Net/Http calls not run: it calls another system or program.',
    ]);
    await expect(cells('Approve')).resolves.toEqual([
      'Ran for real (pure)',
      'Would ask for an approval (“Send the order?”); approved at once.',
    ]);
    await expect(cells('Post')).resolves.toEqual([
      `Recorded by run ${real.executionId.slice(0, 8)}`,
      'Net/Http calls not run: it calls another system or program.',
    ]);
    await expect(cells('Notify')).resolves.toEqual([
      'Generated from the output schema',
      'Net/Http calls not run: it calls another system or program.',
    ]);
    await expect(cells('Digest')).resolves.toEqual(['Ran for real (pure)', '—']);
    await expect(cells('Never')).resolves.toEqual([
      'Skipped',
      expect.stringContaining("Outputs('Post').status > 999"),
    ]);
    // The parameters as the task got them: the expression's value from the mock.
    await row('Post').getByText('Parameters of Post').click();
    await expect(row('Post').locator('pre').textContent()).resolves.toContain('"n": 7');
    await expect(
      plan
        .getByRole('heading', { name: 'Approvals that would be asked' })
        .locator('+ ul')
        .textContent(),
    ).resolves.toBe('Approve: “Send the order?”');
    await expect(
      plan.getByRole('heading', { name: 'Branches skipped' }).locator('+ ul').textContent(),
    ).resolves.toMatch(/^Never: .*is false/);
    await record(page, 'dry-run-plan');
    await page.emulateMedia({ colorScheme: 'dark' });
    await record(page, 'dry-run-plan-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 390, height: 900 });
    await record(page, 'dry-run-plan-phone');
    await page.setViewportSize({ width: 1366, height: 900 });

    // The recorded output's run is a link; a real run's page has no plan.
    await row('Post')
      .getByRole('link', { name: `Recorded by run ${real.executionId}` })
      .click();
    await page.getByRole('heading', { level: 1 }).getByText(real.executionId.slice(0, 8)).waitFor();
    await page.getByRole('heading', { name: 'Tasks', level: 2 }).waitFor();
    expect(await page.getByRole('region', { name: 'Dry run plan' }).count()).toBe(0);
    expect(session.problems).toEqual([]);
  });

  it("opens a new workflow's test run, whose workflow is not stored, with its plan", async () => {
    const { trellis } = session;
    const name = `New-${Date.now().toString(36)}`;
    const report = await trellis.admin.POST('/workflows/tests', {
      body: {
        definition: JSON.stringify({
          name,
          tasks: [
            { name: 'Call', type: { plugin: 'Net/Http' }, parameters: { url: `${origin}/new` } },
          ],
          tests: [{ name: 'calls', expect: {} }],
        }),
      },
    });
    const [testCase] = report.cases;
    expect(testCase).toMatchObject({ passed: true });

    const page = await session.openTab();
    await page.goto(
      `${trellis.baseUrl}/ui/workflows/${report.draftWorkflowId}/runs/${testCase!.executionId}`,
    );
    await signIn(page);
    const plan = page.getByRole('region', { name: 'Dry run plan' });
    await plan
      .locator('tr[data-plan-row="Call"]')
      .getByText('Generated from the output schema')
      .waitFor();
    await expect(page.locator('.crumbs').textContent()).resolves.toBe(
      `Workflows / ${name} (not stored: a test run) /`,
    );
    expect(await page.locator('.crumbs').getByRole('link', { name }).count()).toBe(0);
    expect(received).not.toContain('/new');
    // The one answer the browser reports: its workflow, a draft, is found by no workflow read.
    expect(session.problems).toEqual([
      'console: Failed to load resource: the server responded with a status of 404 (Not Found)',
    ]);
  });
});
