/**
 * The SDK in a real browser: bundled by esbuild for the browser with a small page
 * (browser-page.ts), served from an origin of its own, and run in headless Chromium against a real
 * Trellis with a worker. The API is on another origin, so every call goes through CORS for real:
 * the preflights for `Authorization` and `Last-Event-ID`, and the event stream read by `fetch`.
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ExecutionEvent } from '../../sdk/src/index.js';
import { startTrellis, users, type Trellis } from '../support/harness.js';
import type { Login, TrellisPage } from './browser-page.js';

/** Debian's Chromium (`apt-get install chromium`), unless `TRELLIS_CHROMIUM` names another. */
const chromiumPath = process.env.TRELLIS_CHROMIUM ?? '/usr/bin/chromium';
const hasChromium = existsSync(chromiumPath);
const inCi = !['', '0', 'false'].includes(process.env.CI ?? '');
const noChromium = `No Chromium at ${chromiumPath}: install it (apt-get install chromium) or set TRELLIS_CHROMIUM`;

let trellis: Trellis;
let browser: Browser;
/** Served from an origin the API allows, and from one it does not. */
let pages: { allowed: PageServer; refused: PageServer };
const problems: string[] = [];

beforeAll(async () => {
  if (!hasChromium) {
    // CI installs Chromium (.ci/run): there a missing browser is a broken setup, not a skip.
    if (inCi) throw new Error(`${noChromium}. CI must have it.`);
    console.warn(`Skipping the SDK's browser tests. ${noChromium}.`);
    return;
  }
  const script = await bundlePage();
  pages = { allowed: await servePage(script), refused: await servePage(script) };
  // Both settle before a failure is thrown, so afterAll stops whichever did start.
  const started = await Promise.allSettled([
    startTrellis({
      worker: true,
      config: { Server: { Cors: { AllowedOrigins: [pages.allowed.origin] } } },
    }).then((started) => (trellis = started)),
    chromium
      .launch({
        executablePath: chromiumPath,
        headless: true,
        args: ['--no-sandbox', '--disable-background-networking', '--disable-dev-shm-usage'],
      })
      .then((launched) => (browser = launched)),
  ]);
  for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await trellis?.stop();
  await pages?.allowed.close();
  await pages?.refused.close();
});
beforeEach((context) => {
  if (!hasChromium) context.skip(noChromium);
  problems.length = 0;
});

/** The page bundled with the SDK as a browser app would be: one script, no Node built-ins. */
async function bundlePage(): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./browser-page.ts', import.meta.url))],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error('esbuild wrote no bundle');
  return output.text;
}

interface PageServer {
  origin: string;
  close(): Promise<void>;
}

/** A static server for the page: `/` and its script. */
async function servePage(script: string): Promise<PageServer> {
  // No favicon: the browser would ask for one and log the 404 as an error.
  const html =
    '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>Trellis SDK</title>' +
    '<script src="/page.js"></script>';
  const server = http.createServer((request, response) => {
    const [type, body] =
      request.url === '/page.js'
        ? ['text/javascript', script]
        : request.url === '/'
          ? ['text/html', html]
          : [undefined, 'not found'];
    response.writeHead(type ? 200 : 404, {
      'content-type': `${type ?? 'text/plain'}; charset=utf-8`,
    });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A fresh tab on the page, with its errors kept for the assertion messages. */
async function openPage(server: PageServer): Promise<Page> {
  const page = await browser.newPage();
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  await page.goto(`${server.origin}/`);
  return page;
}

/** Runs one of the page's scenarios in the browser and returns its JSON result. */
async function inPage<K extends keyof TrellisPage>(
  page: Page,
  scenario: K,
  ...args: Parameters<TrellisPage[K]>
): Promise<Awaited<ReturnType<TrellisPage[K]>>> {
  const result = await page.evaluate(
    ([name, values]) => {
      // Runs in the page, where browser-page.ts has put its scenarios on the global object.
      const scenarios = (
        globalThis as unknown as {
          trellisPage: Record<string, (...values: unknown[]) => Promise<unknown>>;
        }
      ).trellisPage;
      return scenarios[name]!(...values);
    },
    [scenario, args] as const,
  );
  return result as Awaited<ReturnType<TrellisPage[K]>>;
}

const login = (): Login => ({ baseUrl: trellis.baseUrl, ...users.admin });

const describeEvent = (event: ExecutionEvent) => {
  switch (event.event) {
    case 'execution':
      return `execution ${event.data.status}`;
    case 'task':
      return `task ${event.data.name} ${event.data.status}`;
    case 'approval':
      return `approval ${event.data.taskName} ${event.data.status}`;
    case 'log':
      return `log ${event.data.message}`;
  }
};
const ids = (events: ExecutionEvent[]) => events.map((event) => event.id);
const oneTo = (count: number) => Array.from({ length: count }, (_, index) => index + 1);

describe('the SDK in Chromium, from another origin', () => {
  it('follows a run with watchExecution to its final event while waitForExecution waits', async () => {
    const page = await openPage(pages.allowed);
    const { executionId, events, waited } = await inPage(page, 'followRun', login(), 300);
    expect(problems).toEqual([]);

    expect(ids(events), 'ids count up from 1 without a gap').toEqual(oneTo(events.length));
    const described = events.map(describeEvent);
    expect(described[0]).toBe('execution Running');
    expect(described.at(-1)).toBe('execution Completed');
    expect(described.filter((line) => line.startsWith('execution'))).toEqual([
      'execution Running',
      'execution Completed',
    ]);
    // Task and log events in the order the run made them.
    const order = ['task Wait1 Completed', 'log first', 'task Wait2 Completed', 'log second'];
    const positions = order.map((line) => described.indexOf(line));
    expect(
      positions.every((position) => position > 0),
      described.join('\n'),
    ).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);

    expect(waited).toMatchObject({ executionId, status: 'Completed' });
    expect(waited.executionEnd).not.toBeNull();
    await page.close();
  });

  it('resumes a watch aborted mid-run from the last event seen: nothing lost, nothing repeated', async () => {
    const page = await openPage(pages.allowed);
    const { before, abortedWith, after, whole } = await inPage(page, 'resumeRun', login(), 1_000);
    expect(problems).toEqual([]);

    expect(abortedWith).toBe('AbortError');
    expect(before.map(describeEvent)).toContain('task Wait1 Running');
    expect(before.map(describeEvent)).not.toContain('execution Completed');
    // `after` went out as Last-Event-ID, a header the preflight had to allow.
    expect(after[0]?.id).toBe(before.at(-1)!.id + 1);
    const resumed = [...before, ...after];
    expect(ids(resumed)).toEqual(oneTo(resumed.length));
    expect(describeEvent(resumed.at(-1)!)).toBe('execution Completed');
    expect(resumed).toEqual(whole);
    expect(after.map(describeEvent)).toEqual(
      expect.arrayContaining(['log first', 'log second', 'task Say2 Completed']),
    );
    await page.close();
  });

  it('gets no answer from an origin the API does not allow', async () => {
    const allowed = await openPage(pages.allowed);
    expect(await inPage(allowed, 'listWorkflows', login())).toEqual({
      count: expect.any(Number) as number,
    });
    const refused = await openPage(pages.refused);
    // The browser blocks what CORS does not allow: fetch fails without a response.
    expect(await inPage(refused, 'listWorkflows', login())).toMatchObject({
      name: 'TypeError',
      message: 'Failed to fetch',
    });
    expect(problems.join('\n')).toMatch(/blocked by CORS policy/);
    await allowed.close();
    await refused.close();
  });
});
