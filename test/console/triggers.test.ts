/**
 * The console's triggers and workflows list in a real browser against a real Trellis with a
 * worker, PostgreSQL and Temporal: a cron trigger created from the form (its next firings previewed
 * as typed, then as its schedule computes them), a webhook trigger whose secret is shown once and
 * masked after, rotated, and a signed delivery seen in its delivery log; and the workflows list's
 * last run status and latest runs. Each page is checked with axe-core and saved as a screenshot
 * under test-results/console/.
 */
import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { postSignedWebhook } from '../support/webhook-signing.js';
import { record, signIn, useConsoleSession } from './browser.js';

const session = useConsoleSession({ worker: true });

/** An attribute of each element a locator finds, in order ('' where it has none). */
async function attributes(found: Locator, name: string): Promise<string[]> {
  return Promise.all((await found.all()).map(async (one) => (await one.getAttribute(name)) ?? ''));
}

const suffix = Date.now().toString(36);
const workflowName = `Greeter-${suffix}`;

describe('the console’s triggers', () => {
  it('creates a cron trigger and a webhook trigger, rotates its secret and logs its delivery', async () => {
    const admin = session.trellis.admin;
    const { id: workflowId } = await admin.POST('/workflows/Add', {
      body: {
        definition: {
          name: workflowName,
          inputs: { who: { type: 'string', required: true } },
          tasks: [
            {
              name: 'Greet',
              type: { plugin: 'Flow/Log' },
              parameters: { message: "Hello, $[Inputs('who')]!" },
            },
          ],
        },
      },
    });
    const { executionId: firstRun } = await admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: { workflowId, inputs: { who: 'first' } },
    });
    await admin.waitForExecution(workflowId, firstRun);

    const page = await session.openTab();
    await page.goto(`${session.trellis.baseUrl}/ui`);
    await signIn(page);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();

    // The workflows list: the last run's status and the latest runs, as marks.
    await page.locator('header').getByRole('link', { name: 'Workflows' }).click();
    const row = page.locator(`tr[data-workflow="${workflowId}"]`);
    await row.locator('.last-run').getByText('Completed').waitFor();
    await expect(row.locator('.run-mark').getAttribute('aria-label')).resolves.toMatch(
      new RegExp(`^Run ${firstRun.slice(0, 8)}: Completed, started `),
    );
    await expect(row.locator('td').nth(3).textContent()).resolves.toBe('none');
    await record(page, 'triggers-01-workflows');

    // From the workflow's page to its triggers.
    await row.getByRole('link', { name: workflowName }).click();
    await page.getByRole('link', { name: 'Manage triggers' }).click();
    await page.getByRole('heading', { name: 'Triggers', level: 1 }).waitFor();
    await page.getByText('No triggers').waitFor();

    // A cron trigger: its next firings previewed as it is typed.
    await page.getByRole('button', { name: 'New trigger' }).click();
    await page.getByLabel('Cron expression').fill('0 6 * *');
    await page.getByText('A cron expression has 5 fields').waitFor();
    await page.getByLabel('Cron expression').fill('*/5 * * * *');
    const preview = page.locator('.cron-preview li');
    await expect(preview.count()).resolves.toBe(5);
    const previewed = await attributes(preview.locator('time'), 'datetime');
    for (const time of previewed) expect(new Date(time).getUTCMinutes() % 5).toBe(0);
    await page.getByLabel('While an earlier run still runs').selectOption('BufferOne');
    await page.getByLabel('Jitter').fill('10s');
    await page.getByLabel('Inputs of each run (JSON object)').fill('{"who": "cron"}');
    await record(page, 'triggers-02-new-cron');
    await page.getByRole('button', { name: 'Create trigger' }).click();
    const cronRow = page.locator('tr[data-trigger]').filter({ hasText: '*/5 * * * *' });
    await cronRow.locator('time').waitFor();
    await record(page, 'triggers-03-list');

    // Its page: the next firings as its schedule computes them, and its policies in the form.
    await cronRow.getByRole('link', { name: /^Schedule / }).click();
    const firings = page.getByRole('list', { name: 'Next firings' }).locator('time');
    await firings.nth(9).waitFor();
    const times = (await attributes(firings, 'datetime')).map((time) => Date.parse(time));
    expect(times).toHaveLength(10);
    // Each within its jitter (10 s) after a five-minute mark, one after another.
    for (const time of times) expect(time % (5 * 60_000)).toBeLessThanOrEqual(10_000);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    await expect(page.getByLabel('While an earlier run still runs').inputValue()).resolves.toBe(
      'BufferOne',
    );
    await record(page, 'triggers-04-cron-trigger');

    // A webhook trigger: its secret shown once, masked from then on.
    await page.getByRole('link', { name: 'Triggers', exact: true }).last().click();
    await page.getByRole('button', { name: 'New trigger' }).click();
    await page.getByLabel('By a webhook').check();
    await page.getByRole('button', { name: 'Create trigger' }).click();
    const secretField = page.getByLabel('The signing secret');
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await page.getByText('it is shown only this once').waitFor();
    await record(page, 'triggers-05-webhook-secret-once');
    // A new page load (signed in again: the session is not kept) shows it no more.
    await page.reload();
    await signIn(page);
    await page.locator('tr[data-trigger]').nth(1).waitFor();
    expect(await page.getByLabel('The signing secret').count()).toBe(0);
    await expect(page.locator('main').textContent()).resolves.not.toContain(secret);
    await page
      .locator('tr[data-trigger]')
      .filter({ hasText: 'signed' })
      .getByRole('link', { name: /^Webhook / })
      .click();
    await page.getByRole('heading', { name: 'Address and secret' }).waitFor();
    await expect(page.getByLabel('masked secret').textContent()).resolves.toBe('********');
    await expect(page.locator('main').textContent()).resolves.not.toContain(secret);
    const triggerId = new URL(page.url()).pathname.split('/').at(-1)!;
    await page.getByText('No deliveries yet.').waitFor();

    // Rotated: a new secret, once; the old one no longer verifies, the new one does.
    await page.getByRole('button', { name: /^Rotate secret / }).click();
    await page.getByRole('button', { name: /^Yes, rotate secret / }).click();
    const rotated = await page.getByLabel('The signing secret').inputValue();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    const baseUrl = session.trellis.baseUrl;
    expect((await postSignedWebhook(baseUrl, triggerId, secret, { who: 'old' })).status).toBe(401);
    const delivered = await postSignedWebhook(baseUrl, triggerId, rotated, { who: 'hook' });
    expect(delivered.status).toBe(202);
    await admin.waitForExecution(workflowId, delivered.body.data!.executionId);

    // The delivery log: the delivery, the run it started and that run's status; and the one
    // signed with the old secret, refused, with why.
    await page.getByRole('button', { name: 'Refresh' }).click();
    const rows = page.locator('table.deliveries tbody tr');
    const delivery = rows.filter({ hasText: delivered.webhookId });
    await delivery.waitFor();
    await expect(rows.count()).resolves.toBe(2);
    await delivery.getByText('Completed').waitFor();
    const refused = rows.filter({ hasText: 'Refused (401)' });
    await refused.getByText('webhook.signature_invalid').waitFor();
    await expect(refused.getByRole('link').count()).resolves.toBe(0);
    await expect(delivery.getByRole('link').textContent()).resolves.toBe(
      `Run ${delivered.body.data!.executionId.slice(0, 8)}`,
    );
    await record(page, 'triggers-06-webhook-trigger');
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(
      page.evaluate<number>('document.documentElement.scrollWidth'),
    ).resolves.toBeLessThanOrEqual(390);
    await record(page, 'triggers-06-webhook-trigger-phone');
    await page.setViewportSize({ width: 1280, height: 900 });

    // Unsigned, then signing again: the console makes the secret the update needs, shown once.
    await page.getByLabel('Signature').selectOption('None');
    await page.getByRole('button', { name: 'Save trigger' }).click();
    await page.getByText('none: deliveries are not signed').waitFor();
    await page.getByLabel('Signature').selectOption('StandardWebhooks');
    await page.getByRole('button', { name: 'Save trigger' }).click();
    const resigned = await page.locator('#saved-webhook-secret').inputValue();
    expect(resigned).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await expect(page.getByLabel('masked secret').textContent()).resolves.toBe('********');
    expect((await postSignedWebhook(baseUrl, triggerId, rotated, { who: 'old' })).status).toBe(401);
    const signedAgain = await postSignedWebhook(baseUrl, triggerId, resigned, { who: 'new' });
    expect(signedAgain.status).toBe(202);
    const latestRun = signedAgain.body.data!.executionId;
    await admin.waitForExecution(workflowId, latestRun);

    // The project's triggers, and the workflows list with the webhook's runs among the latest.
    await page.locator('header').getByRole('link', { name: 'Triggers' }).click();
    await page.getByRole('heading', { name: 'Triggers', level: 1 }).waitFor();
    await page.getByRole('cell', { name: '*/5 * * * *' }).waitFor();
    await expect(page.locator('tbody tr').count()).resolves.toBe(2);
    await record(page, 'triggers-07-project-triggers');
    await page.locator('header').getByRole('link', { name: 'Workflows' }).click();
    // The schedule may have fired meanwhile: its runs are marks too. Oldest first.
    await row.locator('.run-mark').nth(2).waitFor();
    const marks = await attributes(row.locator('.run-mark'), 'aria-label');
    const runs = [firstRun, delivered.body.data!.executionId, latestRun];
    const places = runs.map((run) =>
      marks.findIndex((mark) => mark.startsWith(`Run ${run.slice(0, 8)}: Completed`)),
    );
    expect(places[0]).toBe(0);
    expect(places[1]).toBeGreaterThan(0);
    expect(places[2]).toBeGreaterThan(places[1]!);
    await expect(row.locator('td').nth(3).textContent()).resolves.toBe('1 schedule, 1 webhook');
    await expect(row.locator('td').nth(4).textContent()).resolves.toMatch(/^\d{4}-\d\d-\d\d /);
    await record(page, 'triggers-08-workflows-after');
    expect(session.problems).toEqual([]);
  });
});
