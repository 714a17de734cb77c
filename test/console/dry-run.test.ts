/**
 * A dry run in the console (real Chromium, real Trellis): its run page and the workflow's list
 * of runs carry a "Dry run" badge; a real run's do not.
 */
import { describe, expect, it } from 'vitest';
import { signIn, useConsoleSession } from './browser.js';

const session = useConsoleSession({ worker: true });

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
});
