/**
 * The console's service pages in a real browser against a real Trellis (worker, PostgreSQL,
 * Temporal, a webhook receiver): store a plugin configuration with a secret and see it masked
 * (never in the page, kept when the form is saved again, used by a run), read the plugin catalog
 * and a plugin's parameters from its schema, and the notification delivery log with a delivered
 * and a failed attempt. Then every console page, light and dark: no serious or critical axe
 * violation, the page body not wider than a laptop's (1366) or a phone's (390) screen, a skip link
 * first in the tab order; each saved as a screenshot under test-results/console/.
 */
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { definition, eventually, run } from '../support/engine-support.js';
import { users } from '../support/harness.js';
import { record, signIn, useConsoleSession } from './browser.js';

// A receiver that accepts every event, beside a webhook nobody listens on (refused at once).
const received: string[] = [];
const receiver = http.createServer((req, res) => {
  received.push(String(req.headers['webhook-id']));
  req.resume().on('end', () => res.writeHead(204).end());
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
const closed = http.createServer();
await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
const nobody = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/hooks`;
await new Promise((resolve) => closed.close(resolve));
afterAll(() => new Promise((resolve) => receiver.close(resolve)));

const secret = `whsec_${randomBytes(24).toString('base64')}`;
const session = useConsoleSession({
  worker: true,
  config: {
    Notifications: {
      Webhooks: [
        { Url: `${origin}/hooks/trellis`, Events: ['ExecutionCompleted'], Secret: secret },
        { Url: nobody, Events: ['ExecutionCompleted'], Secret: secret },
      ],
      MaxAttempts: 2,
    },
  },
});

const suffix = Date.now().toString(36);
const configName = `signing-${suffix}`;
const hmacKey = `key-${randomBytes(8).toString('hex')}`;

/** Saves the page in the light theme and in the dark one, checking each with axe. */
async function recordThemes(page: Page, name: string): Promise<void> {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    // A frame for what redraws when the scheme changes (the overview's charts).
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(resolve))');
    await record(page, `service-${name}-${colorScheme}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/**
 * What sticks out of the window at each width (the page body scrolls sideways): the outermost
 * elements reaching past its right edge, outside boxes that scroll themselves; none when it fits.
 */
async function overflowAt(
  page: Page,
  widths: number[],
  name?: string,
): Promise<Record<number, string[]>> {
  const overflow: Record<number, string[]> = {};
  for (const width of widths) {
    await page.setViewportSize({ width, height: 900 });
    overflow[width] = await page.evaluate<string[]>(`(() => {
      const root = document.documentElement;
      if (root.scrollWidth <= root.clientWidth) return [];
      const inScroller = (element) => {
        for (let up = element.parentElement; up; up = up.parentElement) {
          if (['auto', 'scroll'].includes(getComputedStyle(up).overflowX)) return true;
        }
        return false;
      };
      const out = [...document.body.querySelectorAll('*')].filter(
        (element) => element.getBoundingClientRect().right > root.clientWidth + 1 && !inScroller(element),
      );
      return out
        .filter((element) => !out.includes(element.parentElement))
        .map((element) => element.tagName.toLowerCase() + (element.className ? '.' + String(element.className).split(' ').join('.') : '') + ' ' + Math.round(element.getBoundingClientRect().right) + 'px');
    })()`);
  }
  // The last width's page as a phone shows it, checked with axe too.
  if (name) await record(page, `service-${name}-phone`);
  await page.setViewportSize({ width: 1366, height: 900 });
  return overflow;
}

const heading = (page: Page, name: string | RegExp) =>
  page.getByRole('heading', { level: 1, name }).waitFor();

describe('the service pages', () => {
  it('stores a configuration secret masked, reads the plugin catalog and the delivery log', async () => {
    const done = await run(
      session.trellis,
      definition([{ name: 'Note', type: { plugin: 'Flow/Log' }, parameters: { message: 'hi' } }]),
    );
    expect(done.execution.status).toBe('Completed');

    const page = await session.openTab();
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.goto(`${session.trellis.baseUrl}/ui`);
    await signIn(page);
    await heading(page, 'Overview');

    // A configuration of Security/Hash, its HMAC key typed into a password field.
    const nav = page.locator('header nav');
    await nav.getByRole('link', { name: 'Configurations' }).click();
    await heading(page, 'Plugin configurations');
    await page.getByRole('button', { name: 'New configuration' }).click();
    await page.getByLabel('Name').fill(configName);
    await page.getByLabel('Plugin').selectOption({ label: 'Security/Hash 1.0.0' });
    const keyField = page.getByLabel(/^hmacKey/);
    await expect(keyField.getAttribute('type')).resolves.toBe('password');
    await keyField.fill(hmacKey);
    await page.getByRole('button', { name: 'Create configuration' }).click();
    await page
      .getByRole('status')
      .getByText(`Configuration "${configName}" was created.`)
      .waitFor();
    const row = page.locator(`tr[data-configuration="${configName}"]`);
    await expect(row.textContent()).resolves.toContain('Security/Hash');

    // Edited: the secret is stored but not shown, nowhere in the page; saving keeps it.
    await row.getByRole('button', { name: `Edit ${configName}` }).click();
    await page.getByRole('heading', { name: `Edit ${configName}` }).waitFor();
    await expect(keyField.inputValue()).resolves.toBe('');
    await expect(keyField.getAttribute('placeholder')).resolves.toBe('Stored (not shown)');
    await page.getByText('A value is stored and is never shown').waitFor();
    expect(await page.content()).not.toContain(hmacKey);
    await recordThemes(page, 'configuration-edit');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page
      .getByRole('status')
      .getByText(`Configuration "${configName}" was updated.`)
      .waitFor();
    expect(await page.content()).not.toContain(hmacKey);
    const [listed] = await session.trellis.admin.GET('/config', {});
    const stored = await session.trellis.admin.GET('/config/{configId}', {
      params: { path: { configId: listed!.id } },
    });
    expect(stored.specifications).toEqual({ hmacKey: '********' });
    // The key kept is the one typed: a task on the configuration signs with it.
    const signing = definition([
      { name: 'Sign', type: configName, parameters: { input: 'abc', hmac: true } },
    ]);
    const signed = await run(session.trellis, signing);
    expect(signed.execution.status).toBe('Completed');
    const [task] = await session.trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/tasks',
      { params: { path: { workflowId: signed.workflowId, executionId: signed.executionId } } },
    );
    const detail = await session.trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}',
      {
        params: {
          path: {
            workflowId: signed.workflowId,
            executionId: signed.executionId,
            taskExecutionId: task!.id,
          },
        },
      },
    );
    expect(detail.output).toMatchObject({
      digest: createHmac('sha256', hmacKey).update('abc').digest('hex'),
    });
    await recordThemes(page, 'configurations');

    // The catalog: each plugin with its version and effects; a plugin's parameters from its schema.
    await nav.getByRole('link', { name: 'Plugins' }).click();
    await heading(page, 'Plugins');
    const hash = page.locator('tr[data-plugin="Security/Hash"]');
    await expect(hash.textContent()).resolves.toMatch(/Security\/Hash1\.0\.0pure/);
    await expect(page.locator('tr[data-plugin="Net/Http"]').textContent()).resolves.toContain(
      'calls',
    );
    await recordThemes(page, 'plugins');
    await hash.getByRole('link', { name: 'Security/Hash' }).click();
    await heading(page, /Security\/Hash/);
    const parameter = (name: string) =>
      page.locator(`#parameters tr[data-name="${name}"] td`).allTextContents();
    await expect(parameter('input')).resolves.toEqual([
      'input',
      'string',
      'Yes',
      'The data to hash, as text or Base64 (see `inputEncoding`).',
      '—',
    ]);
    await expect(parameter('algorithm')).resolves.toEqual([
      'algorithm',
      'one of "md5", "sha1", "sha256", "sha512"',
      'No',
      'The hash algorithm.',
      '"sha256"',
    ]);
    await expect(page.locator('#output tr[data-name="digest"]').count()).resolves.toBe(1);
    await expect(page.locator('tr[data-setting="hmacKey"]').textContent()).resolves.toMatch(
      /hmacKeysecret/,
    );
    await recordThemes(page, 'plugin');

    // Uninstalled after confirming, and installed again from the catalog.
    await page.getByRole('link', { name: 'Plugins', exact: true }).first().click();
    await page.locator('tr[data-plugin="Data/Base64"]').getByRole('link').click();
    await heading(page, /Data\/Base64/);
    await page.getByRole('button', { name: 'Uninstall Data/Base64 1.0.0' }).click();
    await page.getByRole('button', { name: 'Yes, uninstall Data/Base64 1.0.0' }).click();
    await heading(page, 'Plugins');
    await page.locator('tr[data-plugin="Security/Hash"]').waitFor();
    await expect(page.locator('tr[data-plugin="Data/Base64"]').count()).resolves.toBe(0);
    await page.getByLabel('Type').fill('Data/Base64');
    await page.getByRole('button', { name: 'Install' }).click();
    await page.getByRole('status').getByText('Plugin "Data/Base64" 1.0.0 was installed.').waitFor();
    await page.locator('tr[data-plugin="Data/Base64"]').waitFor();

    // The delivery log: the receiver's attempt delivered, the other's failed with why.
    await nav.getByRole('link', { name: 'Notifications' }).click();
    await heading(page, 'Notifications');
    await page.getByRole('button', { name: 'Show deliveries' }).waitFor();
    // The worker delivers after the run ends: both attempts of its event, then the page.
    await eventually(async () => {
      const attempts = await session.trellis.admin.GET('/notifications/deliveries', {
        params: { query: { executionId: done.executionId } },
      });
      expect(attempts.map(({ outcome }) => outcome).sort()).toEqual(
        expect.arrayContaining(['Delivered', expect.stringMatching(/Failed|Abandoned/)]),
      );
    }, 30_000);
    await page.getByRole('button', { name: 'Show deliveries' }).click();
    const delivered = page.locator('tbody tr', { hasText: 'Delivered' });
    const failed = page.locator('tbody tr', { hasText: nobody });
    await failed.first().waitFor();
    await expect(delivered.first().textContent()).resolves.toContain('HTTP 204');
    await expect(failed.first().textContent()).resolves.toMatch(/Run completed.*Failed|Abandoned/);
    expect(received.length).toBeGreaterThan(0);
    // Filtered to one run's events: only its attempts.
    await page.getByLabel('Run').fill(signed.executionId);
    await page.getByRole('button', { name: 'Show deliveries' }).click();
    await page
      .getByText(`run ${signed.executionId.slice(0, 8)}`)
      .first()
      .waitFor();
    await page
      .getByText(`run ${done.executionId.slice(0, 8)}`)
      .first()
      .waitFor({ state: 'detached' });
    await recordThemes(page, 'notifications');

    // Deleting is refused while a workflow uses the configuration, and says which; then done.
    await nav.getByRole('link', { name: 'Configurations' }).click();
    await row.getByRole('button', { name: `Delete ${configName}` }).click();
    await row.getByRole('button', { name: `Yes, delete ${configName}` }).click();
    await page.getByRole('alert').getByText(`is used by workflows "${signing.name}"`).waitFor();
    await session.trellis.admin.DELETE('/workflows/{workflowId}', {
      params: { path: { workflowId: signed.workflowId } },
    });
    await row.getByRole('button', { name: `Delete ${configName}` }).click();
    await row.getByRole('button', { name: `Yes, delete ${configName}` }).click();
    await page
      .getByRole('status')
      .getByText(`Configuration "${configName}" was deleted.`)
      .waitFor();
    await row.waitFor({ state: 'detached' });
    // The refused deletion's 409 is logged by the browser; the page showed why.
    expect(session.problems).toEqual([
      'console: Failed to load resource: the server responded with a status of 409 (Conflict)',
    ]);
  });

  it('passes axe on every page, light and dark, fits a laptop and a phone, and starts with a skip link', async () => {
    const done = await run(
      session.trellis,
      definition([{ name: 'Note', type: { plugin: 'Flow/Log' }, parameters: { message: 'hi' } }]),
    );
    const [plugin] = await session.trellis.admin.GET('/plugins', {});
    const { triggerId } = await session.trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId: done.workflowId } },
      body: {
        workflowId: done.workflowId,
        type: 'Webhook',
        status: 'Active',
        properties: { signature: 'StandardWebhooks' },
      },
    });
    const page = await session.openTab();
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.goto(`${session.trellis.baseUrl}/ui`);
    await heading(page, 'Sign in to Trellis');
    await recordThemes(page, 'sign-in');
    await expect(overflowAt(page, [1366, 390])).resolves.toEqual({ 1366: [], 390: [] });
    // Kept in the tab's session storage, so that each page can be opened by its address.
    await page.getByLabel(/Stay signed in/).check();
    await signIn(page);
    await heading(page, 'Overview');

    const pages: [name: string, path: string, title: string | RegExp][] = [
      ['overview', '/', 'Overview'],
      ['executions', '/executions', 'Executions'],
      ['workflows', '/workflows', 'Workflows'],
      ['workflow', `/workflows/${done.workflowId}`, /engine-/],
      ['run', `/workflows/${done.workflowId}/runs/${done.executionId}`, /Run/],
      ['revisions', `/workflows/${done.workflowId}/revisions/1...1`, /Revisions of/],
      ['editor', '/workflows/new', 'New workflow'],
      ['triggers', '/triggers', 'Triggers'],
      ['workflow-triggers', `/workflows/${done.workflowId}/triggers`, 'Triggers'],
      ['trigger', `/workflows/${done.workflowId}/triggers/${triggerId}`, /Webhook trigger/],
      ['approvals', '/approvals', 'Approvals'],
      ['configurations', '/configurations', 'Plugin configurations'],
      ['plugins', '/plugins', 'Plugins'],
      ['plugin', `/plugins/${plugin!.id}`, new RegExp(plugin!.type)],
      ['notifications', '/notifications', 'Notifications'],
      ['members', '/members', /Members/],
      ['keys', '/keys', /API keys/],
      ['audit', '/audit', /Audit/],
    ];
    const overflows: Record<string, Record<number, string[]>> = {};
    for (const [name, path, title] of pages) {
      await page.goto(`${session.trellis.baseUrl}/ui${path}`);
      await heading(page, title);
      // Every part of the page loaded.
      const loading = page.getByRole('status').filter({ hasText: 'Loading…' });
      while ((await loading.count()) > 0) await loading.first().waitFor({ state: 'detached' });
      await recordThemes(page, `page-${name}`);
      // The first Tab reaches the skip link, shown while focused.
      await page.keyboard.press('Tab');
      const skip = page.getByRole('link', { name: 'Skip to the page' });
      await expect(
        skip.evaluate(
          (link: { ownerDocument: { activeElement: unknown } }) =>
            link === link.ownerDocument.activeElement,
        ),
      ).resolves.toBe(true);
      await expect(skip.isVisible()).resolves.toBe(true);
      overflows[name] = await overflowAt(page, [1366, 390], `page-${name}`);
    }
    expect(overflows).toEqual(
      Object.fromEntries(pages.map(([name]) => [name, { 1366: [], 390: [] }])),
    );
    expect(session.problems).toEqual([]);
  });

  it('gives a user with the config role alone its configurations, the settings as JSON', async () => {
    const page = await session.openTab();
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.goto(`${session.trellis.baseUrl}/ui/configurations`);
    await page.getByLabel('User name', { exact: true }).fill(users.config.username);
    await page.getByLabel('Password', { exact: true }).fill(users.config.password);
    await page.getByLabel(/Stay signed in/).check();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading(page, 'Plugin configurations');
    await expect(page.locator('header nav').getByRole('link').allTextContents()).resolves.toEqual([
      'Configurations',
    ]);
    // No catalog to type the form from: the plugin by name, the settings as JSON.
    const name = `json-${suffix}`;
    await page.getByRole('button', { name: 'New configuration' }).click();
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Plugin').fill('Security/Hash@1.0.0');
    await page.getByLabel('Settings (JSON)').fill(JSON.stringify({ hmacKey: hmacKey }));
    await page.getByRole('button', { name: 'Create configuration' }).click();
    await page.getByRole('status').getByText(`Configuration "${name}" was created.`).waitFor();
    await page
      .locator(`tr[data-configuration="${name}"]`)
      .getByRole('button', { name: 'Edit' })
      .click();
    await expect(page.getByLabel('Settings (JSON)').inputValue()).resolves.toBe(
      JSON.stringify({ hmacKey: '********' }, null, 2),
    );
    expect(await page.content()).not.toContain(hmacKey);
    await recordThemes(page, 'configuration-json');
    // The catalog is not for this role: the page says which it needs.
    await page.goto(`${session.trellis.baseUrl}/ui/plugins`);
    await heading(page, 'Nothing here for your roles');
    await page.getByText('The plugins page needs the plugins or admin role.').waitFor();
    expect(session.problems).toEqual([]);
  });
});
