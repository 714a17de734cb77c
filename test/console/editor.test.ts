/**
 * The console's definition editor (CodeMirror) in a real browser (headless Chromium) against a
 * real Trellis: problems underlined as the text is typed, before anything is saved (a misspelled
 * plugin and parameter, each with what it may mean), completion of plugin names, help on a key,
 * a server's refusal shown until the text changes, and the text compared with the saved one.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { record, signIn, useConsoleSession } from './browser.js';

const session = useConsoleSession({});

const suffix = Date.now().toString(36);

const definition = (task: object) =>
  JSON.stringify({ name: `Edited-${suffix}`, tasks: [{ name: 'First', ...task }] }, null, 2);

/**
 * Replaces the editor's whole text. Playwright's `fill` of a contenteditable selects what is there
 * first, which CodeMirror had not always taken after the focus was elsewhere (the problems list,
 * after a click on Add workflow): the new text then followed the old, as one text that is no JSON.
 * (The underlines of the problems are drawn a moment after the list: the tests poll for them.)
 */
async function replaceText(page: Page, text: string): Promise<void> {
  const editor = page.getByLabel('Definition (JSON)');
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await expect.poll(() => editor.textContent()).toBe('');
  await editor.fill(text);
}

async function openEditor(path: string): Promise<Page> {
  const page = await session.openTab();
  await page.goto(`${session.trellis.baseUrl}/ui${path}`);
  await signIn(page);
  await page.getByLabel('Definition (JSON)').waitFor();
  page.setDefaultTimeout(15_000);
  return page;
}

describe('the console’s definition editor', () => {
  it('flags a misspelled plugin and parameter as they are typed, with what they may mean', async () => {
    const page = await openEditor('/workflows/new');
    const problemsBox = page.locator('#definition-problems');

    await replaceText(page, definition({ type: { plugin: 'Flow/Lgo' } }));
    await problemsBox
      .getByText("unknown plugin 'Flow/Lgo' (did you mean 'Flow/Log'?)", { exact: false })
      .waitFor();
    // Underlined in the text, where it is.
    await expect
      .poll(() => page.locator('.cm-lintRange-error').allTextContents())
      .toEqual(['"Flow/Lgo"']);
    await record(page, 'editor-unknown-plugin');
    await page.getByRole('button', { name: 'Add workflow' }).click();
    expect(page.url(), 'nothing is saved while there are problems').toBe(
      `${session.trellis.baseUrl}/ui/workflows/new`,
    );

    await replaceText(
      page,
      definition({ type: { plugin: 'Flow/Delay' }, parameters: { milisecond: 5 } }),
    );
    await problemsBox
      .getByText("unknown parameter 'milisecond' of Flow/Delay (did you mean 'milliseconds'?)", {
        exact: false,
      })
      .waitFor();
    await expect(problemsBox.textContent()).resolves.not.toContain('boolean schema');
  });

  it('completes plugin names and describes the key under the pointer', async () => {
    const page = await openEditor('/workflows/new');
    const editor = page.getByLabel('Definition (JSON)');
    // The cursor stays at the end of what is filled: inside the plugin's name.
    await replaceText(
      page,
      `{\n  "name": "Completed-${suffix}",\n  "tasks": [\n    {\n      "name": "A",\n      "type": { "plugin": "Fl`,
    );
    await page.keyboard.type('o');
    const options = page.locator('.cm-tooltip-autocomplete li');
    await options.filter({ hasText: 'Flow/Log' }).waitFor();
    await expect(options.allTextContents()).resolves.toEqual(
      expect.arrayContaining(['Flow/Delay', 'Flow/Log']),
    );
    await record(page, 'editor-completion');
    await options.filter({ hasText: 'Flow/Delay' }).click();
    // Completed as far as was typed: the closing quote is not.
    await editor.getByText('"Flow/Delay').waitFor();

    await replaceText(
      page,
      definition({ type: { plugin: 'Flow/Delay' }, parameters: { milliseconds: 5 } }),
    );
    // Over its value (a span of its own; the key is plain text in its line).
    await editor.locator('.cm-line span').filter({ hasText: /^5$/ }).hover();
    await page.locator('.cm-tooltip-hover').getByText('How long to wait.').waitFor();
    await record(page, 'editor-help');
  });

  it('shows a refusal of the server until the text changes', async () => {
    const page = await openEditor('/workflows/new');
    const editor = page.getByLabel('Definition (JSON)');
    const problemsBox = page.locator('#definition-problems');
    // A configuration only the server knows of: the text is fine as far as the console can tell.
    await replaceText(page, definition({ type: 'NoSuchConfiguration' }));
    await problemsBox.getByText('No problems found.').waitFor();
    await page.getByRole('button', { name: 'Add workflow' }).click();
    await problemsBox.getByText('(the server refused to save)').waitFor();
    await expect(problemsBox.textContent()).resolves.toContain(
      "uses unknown plugin configuration 'NoSuchConfiguration'",
    );
    await expect.poll(() => page.locator('.cm-lintRange-error').count()).toBe(1);
    await record(page, 'editor-server-refusal');

    await editor.press('End');
    await page.keyboard.type(' ');
    await problemsBox.getByText('No problems found.').waitFor();
    await expect.poll(() => page.locator('.cm-lintRange-error').count()).toBe(0);
  });

  it('compares the text with the saved definition side by side', async () => {
    const saved = definition({ type: { plugin: 'Flow/Log' }, parameters: { message: 'before' } });
    const { id } = await session.trellis.admin.POST('/workflows/Add', {
      body: { definition: saved },
    });
    const page = await openEditor(`/workflows/${id}/edit`);
    const editor = page.getByLabel('Definition (JSON)');
    await editor.getByText('"before"').waitFor();
    await replaceText(page, saved.replace('"before"', '"after"'));
    await page.getByRole('button', { name: 'Compare with saved' }).click();
    const changes = page.locator('#definition-changes');
    const changed = changes.locator('.cm-changedLine');
    await changed.first().waitFor();
    await expect(changed.allTextContents()).resolves.toEqual([
      expect.stringContaining('"before"'),
      expect.stringContaining('"after"'),
    ]);
    await expect(
      changes.getByLabel('Definition being edited').getAttribute('contenteditable'),
    ).resolves.toBe('false');
    await record(page, 'editor-compare');
  });
});
