/**
 * The console's editor and a breaking change of a workflow's declared inputs and outputs, in a
 * real browser (headless Chromium) against a real Trellis: the contract check's verdict names
 * each break and under it each caller it breaks, nothing is saved, the verdict goes when the text
 * changes, and "Save anyway" stores it as a new revision.
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
      outputs: { paid: "Inputs('amount')" },
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
    const { outputs: _removed, ...withoutOutputs } = payment;
    const breaking = {
      ...withoutOutputs,
      inputs: { amount: { type: 'integer', required: true } },
    };
    await editor.fill(JSON.stringify(breaking, null, 2));
    const problemsBox = page.locator('#definition-problems');
    await problemsBox.getByText('No problems found.').waitFor();
    await page.getByRole('button', { name: 'Save changes' }).click();

    const verdict = page.getByRole('region', {
      name: 'Not saved: the change breaks this workflow’s contract',
    });
    await verdict.waitFor();
    // Focused, so that a screen reader reads it first.
    await expect(
      verdict.evaluate(
        (element: { ownerDocument: { activeElement: unknown } }) =>
          element === element.ownerDocument.activeElement,
      ),
    ).resolves.toBe(true);
    await expect(problemsBox.textContent()).resolves.toBe(
      'No problems in the text, but the contract check refused to save it: its verdict is below.',
    );
    await expect(verdict.locator('p').first().textContent()).resolves.toBe(
      '2 changes to its declared inputs or outputs would make the callers listed under each fail. ' +
        'Change the definition back, or save it anyway and change the callers after.',
    );
    const breaks = verdict.locator('ol.verdict-breaks > li');
    await expect(breaks.count()).resolves.toBe(2);
    await expect(breaks.nth(0).textContent()).resolves.toBe(
      'Line 4 inputs.amount changes type from number to integer, so 1 known caller fails: ' +
        'keep its type, or declare an input of the new type under another name' +
        `Breaks:task 'Charge' of workflow "${caller}" gives it 2.5`,
    );
    await expect(breaks.nth(0).locator('li').allTextContents()).resolves.toEqual([
      `task 'Charge' of workflow "${caller}" gives it 2.5`,
    ]);
    // The output the caller reads is gone: a second break, with the same caller under it.
    await expect(breaks.nth(1).textContent()).resolves.toMatch(
      /^Line 1 outputs\.paid is no longer an output, so 1 known caller fails: keep the outputBreaks:/,
    );
    await expect(breaks.nth(1).locator('li').allTextContents()).resolves.toEqual([
      expect.stringContaining(`task 'Charge' of workflow "${caller}"`),
    ]);
    await expect(verdict.textContent()).resolves.not.toContain('acceptBreaking');
    await record(page, 'editor-breaking-change');
    await page.emulateMedia({ colorScheme: 'dark' });
    await record(page, 'editor-breaking-change-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    // A click on a break's line puts the cursor there.
    await breaks.nth(0).getByRole('button', { name: 'Line 4' }).click();
    await expect(
      page.evaluate(
        'document.activeElement?.closest?.("[contenteditable]") !== null || document.activeElement?.shadowRoot !== null',
      ),
    ).resolves.toBe(true);
    const stored = await trellis.admin.GET('/workflows/{workflowId}', {
      params: { path: { workflowId: id } },
    });
    expect(stored.revision).toBe(1);

    // Changed, the text is no longer what was refused: the verdict goes; back, it is checked again.
    const refusedText = JSON.stringify(breaking, null, 2);
    await editor.fill(`${refusedText}\n`);
    await verdict.waitFor({ state: 'detached' });
    await problemsBox.getByText('No problems found.').waitFor();
    await editor.fill(refusedText);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await verdict.waitFor();
    await verdict.getByRole('button', { name: 'Save anyway, breaking its callers' }).click();
    await page.getByRole('heading', { name: `${payment.name} revision 2`, level: 1 }).waitFor();
    const saved = await trellis.admin.GET('/workflows/{workflowId}', {
      params: { path: { workflowId: id } },
    });
    expect(JSON.parse(saved.workflow)).toEqual(breaking);
  });
});
