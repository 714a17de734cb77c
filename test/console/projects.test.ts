/**
 * Projects in the console, in a real browser (headless Chromium) against a real Trellis: an admin
 * switches to another project and sees only its workflows, and a reload stays there; adds a
 * member; creates an API key and sees its secret once (a reload shows only its prefix), which
 * works through the API until it is revoked in the page; and finds the key's creation in the audit
 * trail by its operation. Screenshots go to test-results/console/ and /tmp.
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectFailure } from '../api/api-error.js';
import { clientIn, users } from '../support/harness.js';
import { record, signIn, useConsoleSession } from './browser.js';

const session = useConsoleSession({});

const suffix = Date.now().toString(36);
const projectB = `team-b-${suffix}`;
const inDefault = `InDefault-${suffix}`;
const inB = `InB-${suffix}`;

const note = (name: string) => ({
  definition: {
    name,
    tasks: [{ name: 'Note', type: { plugin: 'Flow/Log' as const }, parameters: { message: 'hi' } }],
  },
});

beforeAll(async () => {
  if (!session.trellis) return;
  await session.trellis.admin.POST('/projects', { body: { name: projectB } });
  await session.trellis.admin.POST('/workflows/Add', { body: note(inDefault) });
  await clientIn(session.trellis, { basic: users.admin }, projectB).POST('/workflows/Add', {
    body: note(inB),
  });
});

/** Saves the page under test-results/console/ (checked with axe) and as /tmp/trellis-<name>.png. */
async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `/tmp/trellis-${name}.png`, fullPage: true });
  await record(page, name);
}

describe('projects in the console', () => {
  it('switches project, manages its members and keys, and reads its audit trail', async () => {
    const page = await session.openTab();
    const { baseUrl } = session.trellis;
    await page.goto(`${baseUrl}/ui/workflows`);
    await signIn(page);
    const switcher = page.locator('header').getByLabel('Project');

    // In default, then in B: only B's workflows; a reload (and a new sign-in) stays in B.
    await page.getByRole('link', { name: inDefault }).waitFor();
    await switcher.selectOption({ label: projectB });
    await page.getByRole('link', { name: inB }).waitFor();
    await expect(page.getByRole('link', { name: inDefault }).count()).resolves.toBe(0);
    await page.reload();
    await signIn(page);
    await page.getByRole('link', { name: inB }).waitFor();
    await expect(switcher.locator('option:checked').textContent()).resolves.toBe(projectB);
    await expect(page.locator('header .who').textContent()).resolves.toContain(
      'admin (admin, config, plugins, workflow)',
    );
    await shoot(page, 'projects-workflows');

    // Members: add one with its roles; the API's answer is what the page says.
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: `Members of ${projectB}`, level: 1 }).waitFor();
    await page.getByLabel('Name').fill('group:analysts');
    await page.getByRole('checkbox', { name: /^config/ }).check();
    await page.getByRole('button', { name: 'Save member' }).click();
    await page
      .getByRole('status')
      .getByText(`"group:analysts" is a member of project "${projectB}".`)
      .waitFor();
    await expect(
      page.locator('tr[data-member="group:analysts"] td').nth(1).textContent(),
    ).resolves.toBe('config, workflow');
    expect(
      await session.trellis.admin.GET('/projects/{projectId}/members/{name}', {
        params: { path: { projectId: projectB, name: 'group:analysts' } },
      }),
    ).toEqual({ name: 'group:analysts', roles: ['config', 'workflow'] });
    await shoot(page, 'projects-members');

    // API keys: the secret once, with its warning; it works through the API.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: `API keys of ${projectB}`, level: 1 }).waitFor();
    await page.getByLabel('Name').fill('ci');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('Copy the key now: it is shown only this once.').waitFor();
    const secret = await page.getByLabel('The key ci').inputValue();
    expect(secret).toMatch(/^trellis_/);
    await shoot(page, 'projects-key-created');
    const viaKey = clientIn(session.trellis, { bearer: secret });
    expect((await viaKey.GET('/workflows')).map((workflow) => workflow.name)).toEqual([inB]);

    // After a reload the secret is gone; the list shows the key by its prefix.
    await page.reload();
    await signIn(page);
    const row = page.locator('tr[data-key="ci"]');
    await row.waitFor();
    await expect(page.getByLabel('The key ci').count()).resolves.toBe(0);
    expect(await page.content()).not.toContain(secret);
    const prefix = await row.locator('code').textContent();
    expect(secret.startsWith(`${prefix}_`)).toBe(true);
    await shoot(page, 'projects-keys');

    // Revoked in the page, after confirming: the API refuses it.
    await row.getByRole('button', { name: 'Revoke ci' }).click();
    await row.getByRole('button', { name: 'Yes, revoke ci' }).click();
    await page.getByRole('status').getByText('API key "ci" was revoked.').waitFor();
    // The list is read again after the message: the row shows the revocation a moment later.
    await expect.poll(() => row.locator('td').nth(6).textContent()).not.toBe('No');
    await expectFailure(viaKey.GET('/workflows'), 401);

    // The audit trail, in B, by operation.
    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { name: 'Audit trail', level: 1 }).waitFor();
    await expect(
      page.locator('main').getByLabel('Project').locator('option:checked').textContent(),
    ).resolves.toBe(projectB);
    await page.getByLabel('Operation').fill('createApiKey');
    await page.getByRole('button', { name: 'Show entries' }).click();
    const entry = page.locator('tr[data-operation="createApiKey"]');
    // Before the filter applies, the page lists every entry of B.
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    await expect(entry.textContent()).resolves.toMatch(
      new RegExp(`admin \\(user\\)createApiKey${projectB}id: [0-9a-f-]{36}.*200`),
    );
    await shoot(page, 'projects-audit');

    expect(session.problems).toEqual([]);
    await page.close();
  });
});
