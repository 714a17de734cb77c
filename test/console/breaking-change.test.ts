/**
 * The console's editor and a breaking change of a workflow's declared inputs, in a real browser
 * (headless Chromium) against a real Trellis: the server's refusal is listed with each break and
 * the caller it breaks, nothing is saved, and "Save anyway" stores it as a new revision.
 */
import { describe, expect, it } from 'vitest';
import { record, signIn, useConsoleSession } from './browser.js';

const session = useConsoleSession({});

const suffix = Date.now().toString(36);

describe('a breaking change in the console’s editor', () => {
  it('lists the breaks the server refused and saves anyway when asked', async () => {
    const { trellis } = session;
    const payment = {
      name: `Pay-${suffix}`,
      inputs: { amount: { type: 'number', required: true } },
      tasks: [{ name: 'Say', type: { plugin: 'Flow/Log' }, parameters: { message: 'paid' } }],
    };
    const { id } = await trellis.admin.POST('/workflows/Add', {
      body: { definition: JSON.stringify(payment) },
    });
    const caller = `Checkout-${suffix}`;
    await trellis.admin.POST('/workflows/Add', {
      body: {
        definition: JSON.stringify({
          name: caller,
          tasks: [{ name: 'Charge', workflow: id, inputs: { amount: 2.5 } }],
        }),
      },
    });

    const page = await session.openTab();
    await page.goto(`${trellis.baseUrl}/ui/workflows/${id}/edit`);
    await signIn(page);
    const editor = page.getByLabel('Definition (JSON)');
    await editor.waitFor();
    const breaking = { ...payment, inputs: { amount: { type: 'integer', required: true } } };
    await editor.fill(JSON.stringify(breaking, null, 2));
    const problemsBox = page.locator('#definition-problems');
    await problemsBox.getByText('No problems found.').waitFor();
    await page.getByRole('button', { name: 'Save changes' }).click();

    await problemsBox.getByText('(the server refused to save)').waitFor();
    await expect(problemsBox.locator('li').allTextContents()).resolves.toEqual([
      expect.stringMatching(
        /^Line 4 inputs\.amount changes type from number to integer, so 1 known caller fails/,
      ),
      `Line 4 inputs.amount task 'Charge' of workflow "${caller}" gives it 2.5`,
    ]);
    await record(page, 'editor-breaking-change');
    const stored = await trellis.admin.GET('/workflows/{workflowId}', {
      params: { path: { workflowId: id } },
    });
    expect(stored.revision).toBe(1);

    await page.getByRole('button', { name: 'Save anyway, breaking its callers' }).click();
    await page.getByRole('heading', { name: `${payment.name} revision 2`, level: 1 }).waitFor();
    const saved = await trellis.admin.GET('/workflows/{workflowId}', {
      params: { path: { workflowId: id } },
    });
    expect(JSON.parse(saved.workflow)).toEqual(breaking);
  });
});
