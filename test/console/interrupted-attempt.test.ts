/**
 * The run page shows an attempt that a stopping worker cut short as an attempt of its own: the
 * page follows the run while its worker stops gracefully and another takes over; the task then
 * reads two attempts, one interrupted, with the interrupted attempt's entries, its interruption
 * (with how long it ran) and the next attempt's in the log, and the task's duration from its
 * first start. Against a real Trellis whose workers are processes of their own; screenshot under
 * test-results/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definition, delay, noop, start, tasksOf } from '../support/engine-support.js';
import { workerProcesses, type WorkerProcesses } from '../support/worker-processes.js';
import { hasChromium, record, signIn, useConsoleSession } from './browser.js';

const session = useConsoleSession({});
let workers: WorkerProcesses | undefined;

beforeAll(async () => {
  if (hasChromium) workers = await workerProcesses(session.trellis);
});
afterAll(() => workers?.stop());

describe('the run page, an interrupted attempt', () => {
  it('shows the attempt a stopped worker cut short, and the next one that completed the task', async () => {
    const first = await workers!.spawnOnly();
    const { workflowId, executionId } = await start(
      session.trellis.admin,
      definition([
        // Longer than the worker's shutdown grace time: the stop interrupts it.
        { name: 'Long', ...delay(9000) },
        { name: 'Tail', type: noop, dependencies: ['Long'] },
      ]),
    );
    const page = await session.openTab();
    await page.goto(`${session.trellis.baseUrl}/ui/workflows/${workflowId}/runs/${executionId}`);
    await signIn(page);
    const long = page.locator('tr[data-task-row="Long"]');
    // Cells: status, attempts, started, took, message.
    const cell = (index: number) => long.locator('td').nth(index).textContent();
    // Running, in its first attempt, once the event stream has caught up with the run.
    await long.locator('.badge[data-status="Running"]').waitFor();
    await long.locator('td').nth(1).getByText('1', { exact: true }).waitFor();

    // The worker stops gracefully; another takes over. The page follows without a reload.
    const second = workers!.spawn();
    first.kill('SIGTERM');
    await second;
    await long.getByText('(1 interrupted)').waitFor();
    await page.locator('h1 .badge[data-status="Completed"]').waitFor({ timeout: 60_000 });
    await expect(cell(1)).resolves.toBe('2 (1 interrupted)');
    // Took: from the interrupted attempt's start to the end of the one that completed.
    const tasks = await tasksOf(session.trellis.admin, workflowId, executionId);
    const took = Date.parse(tasks.Long!.endTime!) - Date.parse(tasks.Long!.startTime!);
    expect(took).toBeGreaterThan(9000);
    await expect(cell(3)).resolves.toBe(`${(took / 1000).toFixed(1)} s`);
    const timeline = page.locator('.timeline');
    const interruption = timeline.locator('li.level-Warning', {
      hasText: /Attempt 1 interrupted after \d+\.\d s: the worker is shutting down\./,
    });
    await interruption.waitFor();
    const longEntries = await timeline
      .locator('li')
      .filter({ has: page.locator('.log-source', { hasText: /^Long$/ }) })
      .locator('.log-message')
      .allTextContents();
    expect(longEntries).toEqual([
      'Started.',
      expect.stringMatching(/^Attempt 1 interrupted after/),
      'Attempt 2 started.',
      expect.stringMatching(/^Completed in \d+ ms\.$/),
    ]);
    // The task's details say the same.
    await long.getByRole('button', { name: 'Long' }).click();
    await page.getByRole('heading', { name: 'Task Long' }).waitFor();
    await expect(page.locator('.panel dl.facts').textContent()).resolves.toMatch(
      /Attempts2 \(1 interrupted\)/,
    );
    await record(page, 'run-interrupted-attempt');
    expect(session.problems).toEqual([]);
    await page.close();
  }, 180_000);
});
