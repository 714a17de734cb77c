/**
 * The README's pictures of the console, taken from a real Trellis in headless Chromium: the
 * overview (1280 × 1140, down to its recent failures), the executions explorer and a run page
 * (1280 × 900 each), each under 200 KB. Written to
 * test-results/console/ (checked with axe like every page); with TRELLIS_README_SCREENSHOTS=1,
 * to docs/ as well, where the README shows them:
 *
 *   TRELLIS_README_SCREENSHOTS=1 npx vitest run --project integration test/console/readme-screenshots.test.ts
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { definition } from '../support/engine-support.js';
import { record, signIn, useConsoleSession } from './browser.js';

const session = useConsoleSession({ worker: true });

const width = 1280;
const intoDocs = ['1', 'true'].includes(process.env.TRELLIS_README_SCREENSHOTS ?? '');
const docs = fileURLToPath(new URL('../../docs/', import.meta.url));
const results = fileURLToPath(new URL('../../test-results/console/', import.meta.url));

/** Saves what the window shows as readme-<name>.png (and docs/console-<name>.png when asked). */
async function picture(page: Page, name: string, height = 900): Promise<void> {
  await page.setViewportSize({ width, height });
  await record(page, `readme-${name}-page`);
  const png = await page.screenshot({ clip: { x: 0, y: 0, width, height } });
  // The PNG's header: its width and height (big-endian, at bytes 16 and 20).
  expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([width, height]);
  expect(png.length).toBeLessThan(200_000);
  await writeFile(`${results}readme-${name}.png`, png);
  if (intoDocs) {
    await writeFile(`${docs}console-${name}.png`, png);
    await expect(readFile(`${docs}console-${name}.png`)).resolves.toEqual(png);
  }
}

describe('the README’s pictures of the console', () => {
  it('shows the overview, the executions explorer and a run page of a project with some history', async () => {
    const admin = session.trellis.admin;
    const add = async (tasks: Parameters<typeof definition>[0], name: string) => {
      const { id } = await admin.POST('/workflows/Add', {
        body: { definition: JSON.stringify(definition(tasks, { name })) },
      });
      return id;
    };
    const start = async (workflowId: string, waitSeconds = 60) =>
      admin.POST('/workflows/{workflowId}/executions', {
        params: { path: { workflowId }, query: { waitSeconds } },
        body: {},
      });
    const orders = await add(
      [
        { name: 'Receive', type: { plugin: 'Flow/Log' }, parameters: { message: 'Order in' } },
        {
          name: 'Price',
          type: { plugin: 'Security/Hash' },
          dependencies: ['Receive'],
          parameters: { algorithm: 'sha256', input: 'order 1042' },
        },
        {
          name: 'Confirm',
          type: { plugin: 'Flow/Log' },
          dependencies: ['Price'],
          parameters: { message: 'Order confirmed' },
        },
        {
          name: 'Escalate',
          type: { plugin: 'Flow/NoOp' },
          dependencies: ['Price'],
          executionCondition: { expression: "Outputs('Price').digest == 'none'" },
        },
      ],
      'Order fulfilment',
    );
    const report = await add(
      [
        {
          name: 'Collect',
          type: { plugin: 'Flow/Delay' },
          parameters: { milliseconds: 400 },
        },
        {
          name: 'Publish',
          type: { plugin: 'Flow/Log' },
          dependencies: ['Collect'],
          parameters: { message: 'Report published' },
        },
      ],
      'Nightly report',
    );
    // A call the network fence refuses (loopback): the task fails with the fence's message.
    const prices = await add(
      [{ name: 'Fetch', type: { plugin: 'Net/Http' }, parameters: { url: 'http://127.0.0.1:9/' } }],
      'Price feed',
    );
    const refunds = await add(
      [
        {
          name: 'Approve refund',
          type: { plugin: 'Flow/NoOp' },
          manualApproval: { enabled: true, comment: 'Refund 40 EUR to order 1042?' },
        },
      ],
      'Refund',
    );
    const shown = await start(orders);
    for (let index = 0; index < 3; index += 1) await start(orders);
    for (let index = 0; index < 2; index += 1) await start(report);
    for (let index = 0; index < 2; index += 1) {
      expect((await start(prices)).status).toBe('Failed');
    }
    const waiting = await start(refunds, 0);
    await admin.waitForExecution(refunds, waiting.executionId, {
      until: ['Paused'],
      timeoutMs: 20_000,
    });

    const page = await session.openTab();
    await page.setViewportSize({ width, height: 900 });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${session.trellis.baseUrl}/ui`);
    await signIn(page);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page
      .getByRole('img', { name: /^Runs per hour by status: 6 completed, 2 failed/ })
      .waitFor();
    await expect(page.locator('.failures li').count()).resolves.toBe(2);
    await picture(page, 'overview', 1140);

    await page.getByRole('navigation').getByRole('link', { name: 'Executions' }).click();
    await page.getByRole('heading', { name: 'Executions', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Refund', exact: true }).first().waitFor();
    await expect(page.locator('tbody tr').count()).resolves.toBe(9);
    await picture(page, 'executions');

    await page.goto(`${session.trellis.baseUrl}/ui/workflows/${orders}/runs/${shown.executionId}`);
    await signIn(page);
    const heading = page.getByRole('heading', { level: 1 });
    await heading.getByText('Completed').waitFor();
    await page
      .locator('[data-task-row="Escalate"]')
      .getByText('Skipped', { exact: true })
      .waitFor();
    await picture(page, 'run');
    expect(session.problems).toEqual([]);
  });
});
