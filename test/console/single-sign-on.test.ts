/**
 * Single sign-on in a real browser (headless Chromium) against a real OpenID provider in-process:
 * "Sign in with Test ID" leads to the provider's own sign-in form, which sends the browser back to
 * the console signed in, with the roles its group holds in `default`; a session whose token
 * expired says so and offers signing in again.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { StartOptions } from '../support/harness.js';
import {
  consoleClientId,
  startOpenIdProvider,
  type OpenIdProvider,
} from '../support/openid-provider.js';
import { record, useConsoleSession } from './browser.js';

const options: StartOptions = {};
let provider: OpenIdProvider;

// Before the session's own start: Trellis is configured with the provider's issuer.
beforeAll(async () => {
  provider = await startOpenIdProvider({ carol: ['ops'] });
  options.config = {
    Security: {
      Oidc: {
        Enabled: true,
        Issuer: provider.issuer,
        ClientId: consoleClientId,
        DisplayName: 'Test ID',
      },
    },
  };
  return () => provider.close();
});

const session = useConsoleSession(options);

const workflowName = `SignedOn-${Date.now().toString(36)}`;

beforeAll(async () => {
  if (!session.trellis) return;
  provider.admit(`${session.trellis.baseUrl}/ui/auth/callback`);
  await session.trellis.admin.PUT('/projects/{projectId}/members/{name}', {
    params: { path: { projectId: 'default', name: 'group:ops' } },
    body: { roles: ['workflow'] },
  });
  await session.trellis.admin.POST('/workflows/Add', {
    body: {
      definition: {
        name: workflowName,
        tasks: [{ name: 'Note', type: { plugin: 'Flow/Log' }, parameters: { message: 'hi' } }],
      },
    },
  });
});

describe('single sign-on in the console', () => {
  it("signs in at the provider and comes back to the overview of its group's project", async () => {
    const page = await session.openTab();
    // The provider's development pages ask for a web font elsewhere and for a favicon it does not
    // have: answered here, so that only the console's own failures would count as problems.
    await page.route('https://fonts.googleapis.com/**', (route) =>
      route.fulfill({ contentType: 'text/css', body: '' }),
    );
    await page.route(`${provider.issuer}/favicon.ico`, (route) => route.fulfill({ status: 204 }));
    await page.goto(`${session.trellis.baseUrl}/ui`);
    await page.getByRole('button', { name: 'Sign in with Test ID' }).click();
    // The provider's own form, on its own origin.
    await page.locator('input[name="login"]').fill('carol');
    expect(new URL(page.url()).origin).toBe(provider.issuer);
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();

    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/ui/');
    await page.locator('header').getByRole('link', { name: 'Workflows' }).click();
    await page.getByRole('heading', { name: 'Workflows', level: 1 }).waitFor();
    await page.getByRole('link', { name: workflowName }).waitFor();
    await expect(page.locator('header .who').textContent()).resolves.toContain(
      `${provider.issuer}#carol (workflow)`,
    );
    await page.screenshot({ path: '/tmp/trellis-sso-workflows.png', fullPage: true });
    await record(page, 'sso-workflows');

    // The token kept in the tab outlives its expiry: the console says so and offers a new sign-in.
    await page.evaluate(() => {
      // In the page: its sessionStorage.
      const { sessionStorage } = globalThis as unknown as {
        sessionStorage: {
          getItem(key: string): string | null;
          setItem(key: string, value: string): void;
        };
      };
      const key = 'trellis-console-credentials';
      const saved = JSON.parse(sessionStorage.getItem(key) ?? '{}') as { expiresAt?: number };
      sessionStorage.setItem(key, JSON.stringify({ ...saved, expiresAt: Date.now() - 1000 }));
    });
    await page.reload();
    await page.getByText('Your sign-in with Test ID has expired. Sign in again.').waitFor();
    await page.getByRole('button', { name: 'Sign in with Test ID' }).waitFor();
    await page.screenshot({ path: '/tmp/trellis-sso-expired.png', fullPage: true });
    await record(page, 'sso-expired');
    // The provider's page asks for web fonts this machine cannot reach; the console's pages
    // report nothing.
    expect(session.problems.filter((problem) => !problem.includes('fonts.googleapis'))).toEqual([]);
  });
});
