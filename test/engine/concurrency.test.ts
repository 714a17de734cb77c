/**
 * `configuration.concurrency` (issue 14) through the real stack: two API processes, each with a
 * worker, on one PostgreSQL and one Temporal task queue. Task start and end times, as the API
 * shows them, prove that runs with the same key never overlap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '#platform/logging.js';
import { executionWorkflowId, scheduleId } from '#protocol/ids.js';
import type { TrellisClient } from '../../sdk/src/index.js';
import { recoverExecutions } from '#application/executions/recover-executions.js';
import { expectFailure } from '../api/api-error.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  addWorkflow,
  definition,
  delay,
  eventually,
  executionLogs,
  tasksOf,
  type Definition,
  type TaskView,
} from '../support/engine-support.js';

let trellis: Trellis;
/** A second API process with its own worker, on the same database and task queue. */
let second: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  second = await startTrellis({
    worker: true,
    databaseUrl: trellis.databaseUrl!,
    config: { Temporal: { TaskQueue: trellis.config.Temporal.TaskQueue } },
  });
});
afterAll(async () => {
  await second?.stop();
  await trellis?.stop();
});

type OnLimit = 'Queue' | 'CancelNew' | 'CancelOldest' | 'Fail';

/** One task that takes `milliseconds`, limited to `limit` runs per customer at once. */
function limited(onLimit: OnLimit, milliseconds: number, limit = 1): Definition {
  return definition([{ name: 'Work', ...delay(milliseconds) }], {
    inputs: { customer: { type: 'string', required: true } },
    configuration: { concurrency: { limit, key: "Inputs('customer')", onLimit } },
  });
}

async function executeFor(
  client: TrellisClient,
  workflowId: string,
  customer: string,
): Promise<string> {
  const started = await client.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
    body: { workflowId, inputs: { customer } },
  });
  return started.executionId;
}

function detail(workflowId: string, executionId: string) {
  return trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
    params: { path: { workflowId, executionId } },
  });
}

function finished(workflowId: string, executionId: string) {
  return trellis.admin.waitForExecution(workflowId, executionId, { timeoutMs: 90_000 });
}

async function workOf(workflowId: string, executionId: string): Promise<TaskView> {
  return (await tasksOf(trellis.admin, workflowId, executionId)).Work!;
}

/** Asserts that no two of the tasks ran at the same time: each ended before the next started. */
function expectNoOverlap(tasks: TaskView[]): void {
  const ran = tasks
    .filter((task) => task.status === 'Completed')
    .sort((a, b) => Date.parse(a.startTime!) - Date.parse(b.startTime!));
  for (let i = 1; i < ran.length; i++) {
    expect(
      Date.parse(ran[i - 1]!.endTime!),
      `task of run ${i} ended after the next one started`,
    ).toBeLessThanOrEqual(Date.parse(ran[i]!.startTime!));
  }
}

/** Waits until the execution is Pending with a message saying what it waits for. */
async function waitingMessage(workflowId: string, executionId: string): Promise<string> {
  return eventually(async () => {
    const execution = await detail(workflowId, executionId);
    expect(execution.status).toBe('Pending');
    expect(execution.message).toMatch(/^Waiting for a concurrency slot/);
    return execution.message;
  });
}

async function slotRows(workflowId: string) {
  return trellis.db
    .selectFrom('concurrencySlot')
    .selectAll()
    .where('workflowId', '=', workflowId)
    .execute();
}

describe('configuration.concurrency', () => {
  it('Queue: runs with one key wait Pending, saying for what, and run one at a time in order', async () => {
    // The first run holds its slot long enough for both others to queue and say so, even on a
    // loaded CI machine (at 1.5 s the first once ended before the third had asked).
    const workflowId = await addWorkflow(trellis.admin, limited('Queue', 3500));
    const first = await executeFor(trellis.admin, workflowId, 'acme');
    await eventually(async () => expect((await workOf(workflowId, first)).status).toBe('Running'));
    const secondRun = await executeFor(second.admin, workflowId, 'acme');
    const third = await executeFor(trellis.admin, workflowId, 'acme');

    expect(await waitingMessage(workflowId, secondRun)).toBe(
      `Waiting for a concurrency slot: 1 of 1 taken for key 'acme' by execution ${first}.`,
    );
    expect(await waitingMessage(workflowId, third)).toBe(
      `Waiting for a concurrency slot: 1 of 1 taken for key 'acme' by execution ${first}; 1 ahead in the queue.`,
    );
    expect((await workOf(workflowId, secondRun)).status).toBe('Pending');

    const runs = [first, secondRun, third];
    for (const id of runs) expect((await finished(workflowId, id)).status).toBe('Completed');
    const tasks = await Promise.all(runs.map((id) => workOf(workflowId, id)));
    expectNoOverlap(tasks);
    // First come, first served.
    expect(Date.parse(tasks[1]!.startTime!)).toBeLessThan(Date.parse(tasks[2]!.startTime!));
    // What it waited for is no longer its message once it ran.
    expect((await detail(workflowId, third)).message).not.toMatch(/Waiting/);
    expect(await executionLogs(trellis.admin, workflowId, third)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Waiting for a concurrency slot: 1 of 1 taken for key 'acme'/),
        'Got a concurrency slot.',
      ]),
    );
    expect(await slotRows(workflowId)).toEqual([]);
  });

  it('runs executions with different keys side by side', async () => {
    const workflowId = await addWorkflow(trellis.admin, limited('Queue', 2000));
    const [a, b] = await Promise.all([
      executeFor(trellis.admin, workflowId, 'north'),
      executeFor(second.admin, workflowId, 'south'),
    ]);
    for (const id of [a, b]) expect((await finished(workflowId, id)).status).toBe('Completed');
    const [workA, workB] = await Promise.all([workOf(workflowId, a), workOf(workflowId, b)]);
    // They overlapped: each started before the other ended.
    expect(Date.parse(workA.startTime!)).toBeLessThan(Date.parse(workB.endTime!));
    expect(Date.parse(workB.startTime!)).toBeLessThan(Date.parse(workA.endTime!));
  });

  it('holds across two API processes and workers: simultaneous starts, limit 2, never three at once', async () => {
    const workflowId = await addWorkflow(trellis.admin, limited('Queue', 800, 2));
    const clients = [trellis.admin, second.admin];
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => executeFor(clients[i % 2]!, workflowId, 'shared')),
    );
    for (const id of runs) expect((await finished(workflowId, id)).status).toBe('Completed');
    const tasks = await Promise.all(runs.map((id) => workOf(workflowId, id)));
    // At every task's start, at most 2 tasks (itself included) were running.
    for (const task of tasks) {
      const at = Date.parse(task.startTime!);
      const running = tasks.filter(
        (other) => Date.parse(other.startTime!) <= at && at < Date.parse(other.endTime!),
      );
      expect(running.length).toBeLessThanOrEqual(2);
    }
    expect(await slotRows(workflowId)).toEqual([]);
  });

  it('CancelNew: of simultaneous starts on two API processes one runs, the others end Canceled naming it', async () => {
    const workflowId = await addWorkflow(trellis.admin, limited('CancelNew', 3000));
    const runs = await Promise.all(
      [trellis.admin, second.admin, trellis.admin, second.admin].map((client) =>
        executeFor(client, workflowId, 'acme'),
      ),
    );
    const outcomes = await Promise.all(runs.map((id) => finished(workflowId, id)));
    const ran = outcomes.filter((execution) => execution.status === 'Completed');
    expect(ran).toHaveLength(1);
    const winner = ran[0]!.executionId;
    for (const execution of outcomes.filter((e) => e.executionId !== winner)) {
      expect(execution.status).toBe('Canceled');
      expect(execution.message).toBe(
        `Canceled: the concurrency limit is reached (1 of 1 taken for key 'acme' by execution ${winner}; onLimit CancelNew).`,
      );
      expect((await workOf(workflowId, execution.executionId)).status).toBe('Canceled');
    }
  });

  it('Fail: a run over the limit ends Failed at once, the running one goes on', async () => {
    const workflowId = await addWorkflow(trellis.admin, limited('Fail', 3000));
    const first = await executeFor(trellis.admin, workflowId, 'acme');
    await eventually(async () => expect((await workOf(workflowId, first)).status).toBe('Running'));
    const refused = await executeFor(second.admin, workflowId, 'acme');
    const ended = await finished(workflowId, refused);
    expect(ended.status).toBe('Failed');
    expect(ended.message).toBe(
      `Failed: the concurrency limit is reached (1 of 1 taken for key 'acme' by execution ${first}; onLimit Fail).`,
    );
    expect((await workOf(workflowId, refused)).status).toBe('Canceled');
    expect((await detail(workflowId, first)).status).toBe('Running');
    expect((await finished(workflowId, first)).status).toBe('Completed');
  });

  it('CancelOldest: the running one is canceled, the new one runs once it has ended', async () => {
    const workflowId = await addWorkflow(trellis.admin, limited('CancelOldest', 60_000));
    const runs: string[] = [];
    for (const client of [trellis.admin, second.admin, trellis.admin]) {
      const newer = await executeFor(client, workflowId, 'acme');
      const previous = runs.at(-1);
      runs.push(newer);
      if (previous !== undefined) {
        const canceled = await finished(workflowId, previous);
        expect(canceled.status).toBe('Canceled');
        expect(canceled.message).toBe(
          `Canceled by execution ${newer} (concurrency limit, onLimit CancelOldest).`,
        );
      }
      await eventually(async () =>
        expect((await workOf(workflowId, newer)).status).toBe('Running'),
      );
    }
    // The newest holds the slot now; cancel it so the test does not wait a minute.
    const newest = runs.at(-1)!;
    await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path: { workflowId, executionId: newest } },
    });
    expect((await finished(workflowId, newest)).status).toBe('Canceled');
    const tasks = await Promise.all(runs.map((id) => workOf(workflowId, id)));
    for (let i = 1; i < tasks.length; i++) {
      expect(tasks[i - 1]!.status).toBe('Canceled');
      expect(Date.parse(tasks[i - 1]!.endTime!)).toBeLessThanOrEqual(
        Date.parse(tasks[i]!.startTime!),
      );
    }
    expect(await slotRows(workflowId)).toEqual([]);
  });

  it('a queued run canceled through the API leaves the queue; the next one runs in its place', async () => {
    const workflowId = await addWorkflow(trellis.admin, limited('Queue', 2000));
    const first = await executeFor(trellis.admin, workflowId, 'acme');
    await eventually(async () => expect((await workOf(workflowId, first)).status).toBe('Running'));
    const queued = await executeFor(trellis.admin, workflowId, 'acme');
    await waitingMessage(workflowId, queued);
    const next = await executeFor(second.admin, workflowId, 'acme');
    await waitingMessage(workflowId, next);

    await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path: { workflowId, executionId: queued } },
    });
    const canceled = await finished(workflowId, queued);
    expect(canceled.status).toBe('Canceled');
    expect(canceled.message).toBe('Canceled by admin while waiting for a concurrency slot.');
    expect((await workOf(workflowId, queued)).status).toBe('Canceled');
    // It left the queue: the next one is now first in line, and says so.
    await eventually(async () =>
      expect(await detail(workflowId, next)).toMatchObject({
        status: 'Pending',
        message: `Waiting for a concurrency slot: 1 of 1 taken for key 'acme' by execution ${first}.`,
      }),
    );
    for (const id of [first, next])
      expect((await finished(workflowId, id)).status).toBe('Completed');
    expectNoOverlap(await Promise.all([first, next].map((id) => workOf(workflowId, id))));
  });

  it('a queued run that is never woken still starts: its timer asks again', async () => {
    const workflowId = await addWorkflow(trellis.admin, limited('Queue', 60_000));
    const holder = await executeFor(trellis.admin, workflowId, 'acme');
    await eventually(async () => expect((await workOf(workflowId, holder)).status).toBe('Running'));
    const queued = await executeFor(trellis.admin, workflowId, 'acme');
    await waitingMessage(workflowId, queued);
    // The holder's run is terminated from Temporal: it ends without waking anyone, and
    // recovery records its end (which releases its slot).
    await trellis.temporal.client.workflow.getHandle(executionWorkflowId(holder)).terminate('test');
    const report = await recoverExecutions(
      {
        db: trellis.db,
        client: trellis.temporal.client,
        config: trellis.config,
        logger: createLogger({ Level: 'silent' }),
      },
      { graceMs: 0 },
    );
    expect(report.finished).toContain(holder);
    await eventually(
      async () => expect((await workOf(workflowId, queued)).status).toBe('Running'),
      60_000,
    );
    await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path: { workflowId, executionId: queued } },
    });
    expect((await finished(workflowId, queued)).status).toBe('Canceled');
  });

  it('a rerun obeys the same limit', async () => {
    const workflowId = await addWorkflow(trellis.admin, limited('Queue', 1500));
    const original = await executeFor(trellis.admin, workflowId, 'acme');
    expect((await finished(workflowId, original)).status).toBe('Completed');
    const running = await executeFor(trellis.admin, workflowId, 'acme');
    await eventually(async () =>
      expect((await workOf(workflowId, running)).status).toBe('Running'),
    );
    const rerun = await trellis.admin.POST(
      '/workflows/{workflowId}/executions/{executionId}/rerun',
      { params: { path: { workflowId, executionId: original } }, body: { fromTask: 'Work' } },
    );
    expect(await waitingMessage(workflowId, rerun.executionId)).toContain(
      `by execution ${running}`,
    );
    expect((await finished(workflowId, rerun.executionId)).status).toBe('Completed');
    expectNoOverlap(
      await Promise.all([running, rerun.executionId].map((id) => workOf(workflowId, id))),
    );
  });

  it('a run a schedule fires obeys the same limit', async () => {
    const workflowId = await addWorkflow(trellis.admin, limited('Queue', 1500));
    const running = await executeFor(trellis.admin, workflowId, 'acme');
    await eventually(async () =>
      expect((await workOf(workflowId, running)).status).toBe('Running'),
    );
    const { triggerId } = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      // Once a year: the test fires it by hand.
      body: {
        workflowId,
        type: 'TimeBased',
        status: 'Active',
        properties: { cron: '0 0 1 1 *', inputs: { customer: 'acme' } },
      },
    });
    await trellis.temporal.client.schedule.getHandle(scheduleId(triggerId)).trigger();
    const fired = await eventually(async () => {
      const executions = await trellis.admin.GET('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
      });
      const other = executions.find((execution) => execution.id !== running);
      expect(other).toBeDefined();
      return other!.id;
    });
    expect(await waitingMessage(workflowId, fired)).toBe(
      `Waiting for a concurrency slot: 1 of 1 taken for key 'acme' by execution ${running}.`,
    );
    for (const id of [running, fired]) {
      expect((await finished(workflowId, id)).status).toBe('Completed');
    }
    expectNoOverlap(await Promise.all([running, fired].map((id) => workOf(workflowId, id))));
    await trellis.admin.DELETE('/workflows/{workflowId}/triggers/{triggerId}', {
      params: { path: { workflowId, triggerId } },
    });
  });

  it("a subworkflow child obeys its workflow's limit: two parents' children never overlap", async () => {
    const childId = await addWorkflow(trellis.admin, limited('Queue', 1500));
    const parentId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Call', workflow: childId, inputs: { customer: 'acme' } }]),
    );
    const parents = await Promise.all([
      addAndRun(trellis.admin, parentId),
      addAndRun(second.admin, parentId),
    ]);
    const children = await eventually(async () => {
      const executions = await trellis.admin.GET('/workflows/{workflowId}/executions', {
        params: { path: { workflowId: childId } },
      });
      expect(executions).toHaveLength(2);
      return executions;
    });
    const waiting = await eventually(async () => {
      const details = await Promise.all(children.map((child) => detail(childId, child.id)));
      const pending = details.find((execution) => execution.status === 'Pending');
      expect(pending?.message).toMatch(
        /^Waiting for a concurrency slot: 1 of 1 taken for key 'acme' by execution /,
      );
      return pending!;
    });
    expect(children.map((child) => child.id)).toContain(waiting.executionId);
    for (const id of parents) expect((await finished(parentId, id)).status).toBe('Completed');
    for (const child of children) {
      expect((await finished(childId, child.id)).status).toBe('Completed');
    }
    expectNoOverlap(await Promise.all(children.map((child) => workOf(childId, child.id))));
    expect(await slotRows(childId)).toEqual([]);
  });

  it("a subworkflow child its limit refuses fails the parent's task, saying why", async () => {
    const childId = await addWorkflow(trellis.admin, limited('Fail', 3000));
    const parentId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Call', workflow: childId, inputs: { customer: 'acme' } }]),
    );
    const holder = await executeFor(trellis.admin, childId, 'acme');
    await eventually(async () => expect((await workOf(childId, holder)).status).toBe('Running'));
    const parent = await addAndRun(second.admin, parentId);
    expect((await finished(parentId, parent)).status).toBe('Failed');
    const call = (await tasksOf(trellis.admin, parentId, parent)).Call!;
    expect(call.status).toBe('Failed');
    expect(call.message).toMatch(
      new RegExp(
        `^Failed: Subworkflow ".+" \\(execution .+\\) ended Failed: Failed: the concurrency limit is reached \\(1 of 1 taken for key 'acme' by execution ${holder}; onLimit Fail\\)\\.$`,
      ),
    );
    expect((await finished(childId, holder)).status).toBe('Completed');
  });

  it('without a key, every run of the workflow shares the limit', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Work', ...delay(1000) }], {
        configuration: { concurrency: { limit: 1, onLimit: 'Queue' } },
      }),
    );
    const runs = await Promise.all([
      addAndRun(trellis.admin, workflowId),
      addAndRun(second.admin, workflowId),
    ]);
    const waiting = await eventually(async () => {
      const details = await Promise.all(runs.map((id) => detail(workflowId, id)));
      const pending = details.find((execution) => execution.status === 'Pending');
      expect(pending?.message).toMatch(
        /^Waiting for a concurrency slot: 1 of 1 taken by execution /,
      );
      return pending!;
    });
    expect(waiting.message).not.toContain('key');
    for (const id of runs) expect((await finished(workflowId, id)).status).toBe('Completed');
    expectNoOverlap(await Promise.all(runs.map((id) => workOf(workflowId, id))));
  });

  it('refuses bad limits with 400 naming the place, and stores nothing', async () => {
    const bad = (concurrency: unknown, extra: Record<string, unknown> = {}) =>
      definition([{ name: 'Work', ...delay(1) }], {
        inputs: { customer: { type: 'string' } },
        configuration: { concurrency },
        ...extra,
      });
    const add = (def: Definition) =>
      trellis.admin.POST('/workflows/Add', { body: { definition: JSON.stringify(def) } });
    const cases: Array<[unknown, RegExp]> = [
      [
        { limit: 1, onLimit: 'Queue', key: "Outputs('Work').id" },
        /configuration\.concurrency\.key: may read only the run's inputs \(Inputs\('name'\)\), not Outputs/,
      ],
      [
        { limit: 1, onLimit: 'Queue', key: "Variables('region')" },
        /configuration\.concurrency\.key: may read only the run's inputs .*not Variables/,
      ],
      [
        { limit: 1, onLimit: 'Queue', key: "Inputs('tenant')" },
        /configuration\.concurrency\.key: Inputs\('tenant'\) names no declared input/,
      ],
      [
        { limit: 1, onLimit: 'Queue', key: 'Inputs((' },
        /configuration\.concurrency\.key: cannot parse/,
      ],
      [{ limit: 0, onLimit: 'Queue' }, /configuration\.concurrency\.limit/],
      [{ limit: 1, onLimit: 'Later' }, /configuration\.concurrency\.onLimit/],
      [{ limit: 1 }, /configuration\.concurrency.*onLimit/],
      [{ limit: 1, onLimit: 'Queue', keys: 'x' }, /configuration\.concurrency\.keys/],
    ];
    const names: string[] = [];
    for (const [concurrency, message] of cases) {
      const def = bad(concurrency);
      names.push(def.name);
      await expectFailure(add(def), 400, message);
    }
    const stored = await trellis.admin.GET('/workflows');
    expect(stored.filter((workflow) => names.includes(workflow.name))).toEqual([]);

    // And on update: the stored definition stays as it was.
    const good = limited('Queue', 1);
    const workflowId = await addWorkflow(trellis.admin, good);
    await expectFailure(
      trellis.admin.PUT('/workflows/{workflowId}', {
        params: { path: { workflowId } },
        body: {
          workflowId,
          definition: JSON.stringify({
            ...good,
            configuration: { concurrency: { limit: 1, onLimit: 'Queue', key: "Outputs('Work')" } },
          }),
        },
      }),
      400,
      /configuration\.concurrency\.key: may read only the run's inputs/,
    );
    const kept = await trellis.admin.GET('/workflows/{workflowId}', {
      params: { path: { workflowId } },
    });
    expect(JSON.parse(kept.workflow)).toEqual(good);
  });
});

async function addAndRun(client: TrellisClient, workflowId: string): Promise<string> {
  const started = await client.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
    body: { workflowId },
  });
  return started.executionId;
}
