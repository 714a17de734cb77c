/**
 * Headless Chromium for the console's browser tests (playwright-core against Debian's
 * `chromium`): a context with axe-core and a Content-Security-Policy violation listener injected,
 * tabs that collect the errors their pages log, and `record`, which saves a screenshot under
 * test-results/console/ (not in git) and fails on any serious or critical axe violation.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { startTrellis, users, type StartOptions, type Trellis } from '../support/harness.js';

const chromiumPath = process.env.TRELLIS_CHROMIUM ?? '/usr/bin/chromium';
export const hasChromium = existsSync(chromiumPath);
const inCi = !['', '0', 'false'].includes(process.env.CI ?? '');
export const noChromium = `No Chromium at ${chromiumPath}: install it (apt-get install chromium) or set TRELLIS_CHROMIUM`;
const screenshots = fileURLToPath(new URL('../../test-results/console/', import.meta.url));

/** Fails in CI without Chromium; elsewhere warns and says to skip (false). */
export function browserAvailable(): boolean {
  if (hasChromium) return true;
  if (inCi) throw new Error(`${noChromium}. CI must have it.`);
  console.warn(`Skipping the console's browser test. ${noChromium}.`);
  return false;
}

export async function launchBrowser(): Promise<Browser> {
  await mkdir(screenshots, { recursive: true });
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-dev-shm-usage'],
  });
}

/** A context whose pages get axe, and report policy violations as console errors. */
export async function newContext(browser: Browser): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // Injected by the browser itself (not as an inline script, which the policy refuses): axe, and
  // a listener for policy violations.
  const axe = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await context.addInitScript({ content: axe });
  await context.addInitScript({
    content:
      "document.addEventListener('securitypolicyviolation', (event) => " +
      "console.error('CSP violation: ' + event.violatedDirective + ' ' + event.blockedURI));",
  });
  return context;
}

/** A new tab whose page errors and console errors go into `problems`. */
export async function openTab(context: BrowserContext, problems: string[]): Promise<Page> {
  const page = await context.newPage();
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // A refused call (a failed sign-in's 401, a form's 400) is shown by the console; the browser
    // logs the response as an error.
    if (message.type() === 'error' && !/status of (401|400|403|410)/.test(message.text())) {
      problems.push(`console: ${message.text()}`);
    }
  });
  return page;
}

/** Saves the page as test-results/console/<name>.png and checks it with axe. */
export async function record(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${screenshots}${name}.png`, fullPage: true });
  const violations = await page.evaluate(async () => {
    // In the page: axe (injected by the context) and the page's document.
    const { axe, document } = globalThis as unknown as {
      axe: { run: (context: unknown, options: object) => Promise<AxeResults> };
      document: unknown;
    };
    const results = await axe.run(document, {
      runOnly: {
        type: 'tag',
        values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'],
      },
    });
    return results.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      nodes: violation.nodes.slice(0, 3).map((node) => node.target.join(' ')),
    }));
  });
  const serious = violations.filter((violation) =>
    ['serious', 'critical'].includes(violation.impact ?? ''),
  );
  expect(serious, `${name}: ${JSON.stringify(serious, null, 2)}`).toEqual([]);
}

interface AxeResults {
  violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
}

/** Signs in on the sign-in page as the admin (or with another password). */
export async function signIn(page: Page, password: string = users.admin.password): Promise<void> {
  await page.getByLabel('User name', { exact: true }).fill(users.admin.username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** What a console test file works with: a Trellis, a browser context, and what its pages report. */
export interface ConsoleSession {
  readonly trellis: Trellis;
  readonly context: BrowserContext;
  /** Errors the pages logged and policy violations they reported; empty at each test's start. */
  readonly problems: string[];
  /** A new tab of the context, whose problems go to `problems`. */
  openTab(): Promise<Page>;
}

/**
 * Starts a Trellis (`options`, given to the harness) beside headless Chromium for the test file,
 * and stops both after it; without Chromium its tests are skipped (in CI they fail instead).
 */
export function useConsoleSession(options: StartOptions): ConsoleSession {
  let trellis: Trellis | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  const problems: string[] = [];
  beforeAll(async () => {
    if (!browserAvailable()) return;
    const started = await Promise.allSettled([
      startTrellis(options).then((running) => (trellis = running)),
      launchBrowser().then((launched) => (browser = launched)),
    ]);
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
    context = await newContext(browser!);
  }, 180_000);
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await trellis?.stop();
  });
  beforeEach((test) => {
    if (!hasChromium) test.skip(noChromium);
    problems.length = 0;
  });
  return {
    get trellis() {
      return trellis!;
    },
    get context() {
      return context!;
    },
    problems,
    openTab: () => openTab(context!, problems),
  };
}
