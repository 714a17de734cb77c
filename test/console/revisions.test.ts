/**
 * Two revisions side by side in the console (real Chromium, real Trellis): reached from the
 * workflow page's Revisions section, chosen with two labelled lists, the changes counted and
 * marked, each side under its label; stacked one above the other at a phone's width.
 */
import { describe, expect, it } from 'vitest';
import { record, signIn, useConsoleSession } from './browser.js';

const session = useConsoleSession({});

const suffix = Date.now().toString(36);

describe('revisions side by side', () => {
  it('compares two revisions chosen from the list, marks the changed lines and stacks them on a phone', async () => {
    const { trellis } = session;
    const name = `Revised-${suffix}`;
    const say = (message: string) => ({
      name,
      tasks: [{ name: 'Say', type: { plugin: 'Flow/Log' }, parameters: { message } }],
    });
    const { id } = await trellis.admin.POST('/workflows/Add', {
      body: { definition: JSON.stringify(say('one')) },
    });
    for (const definition of [
      say('two'),
      {
        ...say('two'),
        tasks: [
          ...say('two').tasks,
          { name: 'Wait', type: { plugin: 'Flow/NoOp' }, dependencies: ['Say'] },
        ],
      },
    ]) {
      await trellis.admin.PUT('/workflows/{workflowId}', {
        params: { path: { workflowId: id } },
        body: { workflowId: id, definition: JSON.stringify(definition) },
      });
    }

    const page = await session.openTab();
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.goto(`${trellis.baseUrl}/ui/workflows/${id}`);
    await signIn(page);
    const compare = page.getByRole('link', { name: 'Compare revision 1 with the current one' });
    await compare.waitFor();
    await expect(
      page.getByRole('link', { name: 'Compare with revision 2' }).getAttribute('href'),
    ).resolves.toBe(`/ui/workflows/${id}/revisions/2...3`);
    await page.getByRole('heading', { name: 'Revisions', level: 2 }).scrollIntoViewIfNeeded();
    await record(page, 'revisions-workflow-page');
    await compare.click();
    await page.getByRole('heading', { level: 1, name: `Revisions of ${name}` }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/ui/workflows/${id}/revisions/1...3`);
    const before = page.getByLabel('Before', { exact: true });
    const after = page.getByLabel('After', { exact: true });
    await expect(before.inputValue()).resolves.toBe('1');
    await expect(after.inputValue()).resolves.toBe('3');
    const count = page.locator('.change-count');
    // Revision 1 → 3: the message changed, and the task Wait came; the lines counted are those
    // marked on each side.
    const marked = (label: string) =>
      page.getByLabel(label, { exact: true }).locator('.cm-changedLine').count();
    await expect
      .poll(() => count.textContent())
      .toBe(`1 place changed: 2 lines of revision 1, 11 lines of revision 3.`);
    await expect.poll(() => marked('Revision 1')).toBe(2);
    await expect.poll(() => marked('Revision 3 (current)')).toBe(11);
    const sides = page.locator('.side-label');
    await expect
      .poll(() => sides.allTextContents())
      .toEqual(['Revision 1', 'Revision 3 (current)']);
    await expect.poll(() => page.locator('.cm-changedLine').count()).toBeGreaterThan(0);
    await expect(page.getByLabel('Revision 1', { exact: true }).textContent()).resolves.toContain(
      '"message": "one"',
    );
    await record(page, 'revisions-side-by-side');
    await page.emulateMedia({ colorScheme: 'dark' });
    await record(page, 'revisions-side-by-side-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    // Next change: the cursor of revision 3 goes to its first changed line, which has the focus.
    await page.getByRole('button', { name: 'Next change' }).focus();
    await page.keyboard.press('Enter');
    const focused = () =>
      page.evaluate(`(() => {
        let element = document.activeElement;
        while (element?.shadowRoot?.activeElement) element = element.shadowRoot.activeElement;
        const selection = element?.getRootNode().getSelection?.() ?? getSelection();
        const line = selection?.anchorNode?.parentElement?.closest('.cm-line');
        return [element?.getAttribute('aria-label'), line?.textContent?.trim()];
      })()`);
    await expect.poll(focused).toEqual(['Revision 3 (current)', '"message": "two"']);

    // From the keyboard: Tab to the second list and choose revision 2 with the arrow keys.
    await before.focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('ArrowDown');
    await page.getByRole('heading', { level: 2, name: 'Revision 1 → Revision 2' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/ui/workflows/${id}/revisions/1...2`);
    await expect
      .poll(() => count.textContent())
      .toBe('1 place changed: 1 line of revision 1, 1 line of revision 2.');
    await page.getByRole('button', { name: 'Swap' }).click();
    await page.getByRole('heading', { level: 2, name: 'Revision 2 → Revision 1' }).waitFor();
    await expect.poll(() => sides.allTextContents()).toEqual(['Revision 2', 'Revision 1']);

    // A phone: the second side under the first.
    await page.setViewportSize({ width: 390, height: 900 });
    const [first, second] = await Promise.all(
      [0, 1].map((index) => sides.nth(index).boundingBox()),
    );
    expect(second!.y).toBeGreaterThan(first!.y + first!.height);
    expect(second!.x).toBe(first!.x);
    await record(page, 'revisions-phone');

    // An address that names no pair of revisions says so; a revision that does not exist, too.
    // Without a reload (the sign-in is kept in the tab's memory only), as the History API goes.
    const open = (path: string) =>
      page.evaluate(
        `history.pushState(null, '', '/ui/workflows/${id}/revisions/${path}');` +
          "dispatchEvent(new PopStateEvent('popstate'));",
      );
    await open('1..x');
    await page.getByRole('alert').getByText('is not a pair of revisions').waitFor();
    await open('1...9');
    await page
      .getByRole('alert')
      .getByText(/not found|no revision/i)
      .waitFor();
    expect(session.problems.filter((problem) => !problem.includes('404'))).toEqual([]);
  });
});
