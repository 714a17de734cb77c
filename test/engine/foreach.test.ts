/**
 * forEach tasks through the real stack (README, "foreach"): items as entries of the task list,
 * their outputs in order, the parallelism limit proven from the items' own times, Item() and
 * Index(), failures, retries, cancel, and the definition checks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  definition,
  delay,
  noop,
  run,
  start,
  taskLogs,
  untilStatuses,
  eventually,
  type TaskView,
} from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

/** Every task of the run, in the order the API lists them. */
async function allTasks(workflowId: string, executionId: string): Promise<TaskView[]> {
  return trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}/tasks', {
    params: { path: { workflowId, executionId } },
  });
}

async function outputOf(workflowId: string, executionId: string, taskExecutionId: string) {
  const task = await trellis.admin.GET(
    '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}',
    { params: { path: { workflowId, executionId, taskExecutionId } } },
  );
  return task.output;
}

/** The most intervals open at the same moment (an end at the moment of a start comes first). */
function mostAtOnce(intervals: Array<{ start: number; end: number }>): number {
  const events = intervals.flatMap(({ start, end }) => [
    { at: start, delta: 1 },
    { at: end, delta: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let open = 0;
  let most = 0;
  for (const event of events) {
    open += event.delta;
    most = Math.max(most, open);
  }
  return most;
}

async function addExpectingProblems(def: Record<string, unknown>): Promise<string[]> {
  const response = await trellis.admin.raw.POST('/workflows/Add', {
    body: { definition: JSON.stringify(def) },
  });
  expect(response.response.status).toBe(400);
  const body = response.error as unknown as {
    messages: string[];
    succeeded: boolean;
    data: unknown;
  };
  expect(body.succeeded).toBe(false);
  expect(body.data).toBeNull();
  return body.messages.map((message) => message.replace(/^body\.definition: /, ''));
}

describe('forEach', () => {
  it('runs 1,000 items at most 50 at once, each in the task list, outputs in order', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition(
        [
          {
            name: 'List',
            type: noop,
            parameters: { ids: Array.from({ length: 1000 }, (_, i) => `id-${i}`) },
          },
          {
            name: 'Each',
            type: { plugin: 'Flow/Delay' },
            dependencies: ['List'],
            forEach: { items: "Outputs('List').ids", parallelism: 50 },
            parameters: { milliseconds: '$[20 + Index() % 7]' },
          },
          {
            name: 'After',
            type: noop,
            dependencies: ['Each'],
            parameters: { count: "$[Outputs('Each').length]", third: "$[Outputs('Each')[2]]" },
          },
        ],
        { outputs: { waited: "Outputs('Each')" } },
      ),
      180_000,
    );
    expect(execution.status).toBe('Completed');
    const tasks = await allTasks(workflowId, executionId);
    expect(tasks.map((task) => task.name)).toEqual([
      'List',
      'Each',
      ...Array.from({ length: 1000 }, (_, i) => `Each[${i}]`),
      'After',
    ]);
    const items = tasks.filter((task) => task.name.startsWith('Each['));
    expect(new Set(items.map((task) => task.status))).toEqual(new Set(['Completed']));
    const intervals = items.map((task) => ({
      start: Date.parse(task.startTime!),
      end: Date.parse(task.endTime!),
    }));
    const most = mostAtOnce(intervals);
    expect(most).toBeLessThanOrEqual(50);
    // The limit is used, not merely respected: many items overlapped.
    expect(most).toBeGreaterThan(10);
    const each = tasks.find((task) => task.name === 'Each')!;
    expect(Date.parse(each.startTime!)).toBeLessThanOrEqual(
      Math.min(...intervals.map((i) => i.start)),
    );
    expect(Date.parse(each.endTime!)).toBeGreaterThanOrEqual(
      Math.max(...intervals.map((i) => i.end)),
    );
    const waited = Array.from({ length: 1000 }, (_, i) => ({ delayedMilliseconds: 20 + (i % 7) }));
    expect(await outputOf(workflowId, executionId, each.id)).toEqual(waited);
    expect(execution.outputs).toEqual({ waited });
    const after = tasks.find((task) => task.name === 'After')!;
    expect(await outputOf(workflowId, executionId, after.id)).toEqual({
      count: 1000,
      third: { delayedMilliseconds: 22 },
    });
  });

  it('resolves Item() and Index() in parameters and the condition; skipped items give null', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition(
        [
          {
            name: 'Greet',
            type: noop,
            forEach: { items: "$[Variables('people')]" },
            executionCondition: { expression: "Item().name != 'bob'" },
            parameters: {
              text: 'Hello $[Item().name] (#$[Index()])',
              item: '$[Item()]',
              at: '$[Index()]',
            },
          },
        ],
        { variables: { people: [{ name: 'ada' }, { name: 'bob' }, { name: 'cy' }] } },
      ),
    );
    expect(execution.status).toBe('Completed');
    const tasks = await allTasks(workflowId, executionId);
    expect(tasks.map((task) => [task.name, task.status])).toEqual([
      ['Greet', 'Completed'],
      ['Greet[0]', 'Completed'],
      ['Greet[1]', 'Skipped'],
      ['Greet[2]', 'Completed'],
    ]);
    expect(await outputOf(workflowId, executionId, tasks[0]!.id)).toEqual([
      { text: 'Hello ada (#0)', item: { name: 'ada' }, at: 0 },
      null,
      { text: 'Hello cy (#2)', item: { name: 'cy' }, at: 2 },
    ]);
    expect(tasks[0]!.message).toBe('Completed: 3 items (1 skipped).');
    expect(await taskLogs(trellis.admin, workflowId, executionId, tasks[2]!.id)).toEqual([
      "Skipped: the condition Item().name != 'bob' is false.",
    ]);
  });

  it("keeps to the workflow's degreeOfParallelism; an item skipped by its error strategy gives null", async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition(
        [
          {
            name: 'Each',
            type: { plugin: 'Flow/Delay' },
            forEach: { items: '[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]', parallelism: 50 },
            parameters: { milliseconds: '$[Item() == 1 ? 5000 : 150]' },
            timeoutMilliseconds: 1000,
            errorHandling: { strategy: 'Skip' },
          },
        ],
        { configuration: { degreeOfParallelism: 3 } },
      ),
    );
    expect(execution.status).toBe('Completed');
    const tasks = await allTasks(workflowId, executionId);
    const items = tasks.slice(1);
    expect(items.map((task) => task.status)).toEqual([
      'Completed',
      'Skipped',
      ...Array.from({ length: 10 }, () => 'Completed'),
    ]);
    expect(items[1]!.message).toBe(
      'Skipped after a failure (error strategy Skip): Timed out after 1000 ms.',
    );
    const most = mostAtOnce(
      items.map((task) => ({ start: Date.parse(task.startTime!), end: Date.parse(task.endTime!) })),
    );
    expect(most).toBeLessThanOrEqual(3);
    expect(most).toBeGreaterThanOrEqual(2);
    const output = (await outputOf(workflowId, executionId, tasks[0]!.id)) as unknown[];
    expect(output).toHaveLength(12);
    expect(output[1]).toBeNull();
    expect(output[0]).toEqual({ delayedMilliseconds: 150 });
    expect(tasks[0]!.message).toBe('Completed: 12 items (1 skipped).');
  });

  it('completes with an empty array over no items', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([{ name: 'None', type: noop, forEach: { items: '[]' } }]),
    );
    expect(execution.status).toBe('Completed');
    const tasks = await allTasks(workflowId, executionId);
    expect(tasks.map((task) => task.name)).toEqual(['None']);
    expect(await outputOf(workflowId, executionId, tasks[0]!.id)).toEqual([]);
  });

  it('fails the task clearly when the items are not an array', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        { name: 'Start', type: noop, parameters: { ids: 'not a list' } },
        {
          name: 'Each',
          type: noop,
          dependencies: ['Start'],
          forEach: { items: "Outputs('Start').ids" },
        },
        { name: 'After', type: noop, dependencies: ['Each'] },
      ]),
    );
    expect(execution.status).toBe('Failed');
    const tasks = await allTasks(workflowId, executionId);
    expect(tasks.map((task) => [task.name, task.status])).toEqual([
      ['Start', 'Completed'],
      ['Each', 'Failed'],
      ['After', 'Skipped'],
    ]);
    expect(tasks[1]!.message).toBe(
      `Failed: forEach.items must yield an array, but Outputs('Start').ids yields the string "not a list".`,
    );
  });

  it('fails the task clearly past 10,000 items, creating none', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([{ name: 'Many', type: noop, forEach: { items: "Variables('ids')" } }], {
        variables: { ids: Array.from({ length: 10_001 }, (_, i) => i) },
      }),
    );
    expect(execution.status).toBe('Failed');
    const tasks = await allTasks(workflowId, executionId);
    expect(tasks.map((task) => [task.name, task.status, task.message])).toEqual([
      [
        'Many',
        'Failed',
        'Failed: forEach.items yields 10001 items, more than the 10000 a forEach task may run.',
      ],
    ]);
  });

  it('retries a failing item, then fails the task naming it; the rest are skipped or canceled', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        {
          name: 'Each',
          type: { plugin: 'Flow/Delay' },
          forEach: { items: '[1, 2, 3, 4, 5, 6]', parallelism: 1 },
          // Item 2 (the value 3) waits past the attempt's timeout: every attempt fails.
          parameters: { milliseconds: '$[Item() == 3 ? 5000 : 1]' },
          timeoutMilliseconds: 300,
          errorHandling: {
            strategy: 'Retry',
            retryPolicy: { maxRetries: 2, initialDelayMilliseconds: 10, backoffStrategy: 'Fixed' },
          },
        },
        { name: 'Handler', type: noop, runOnFailureOf: ['Each'] },
      ]),
    );
    expect(execution.status).toBe('Completed');
    const tasks = await allTasks(workflowId, executionId);
    const byName = Object.fromEntries(tasks.map((task) => [task.name, task]));
    expect(byName['Each[0]']!.status).toBe('Completed');
    expect(byName['Each[1]']!.status).toBe('Completed');
    expect(byName['Each[2]']!.status).toBe('Failed');
    expect(byName['Each[2]']!.message).toBe('Failed after 3 attempts: Timed out after 300 ms.');
    for (const name of ['Each[3]', 'Each[4]', 'Each[5]']) {
      expect(byName[name]!.status).toBe('Skipped');
      expect(byName[name]!.message).toBe('Skipped: item Each[2] failed.');
    }
    expect(byName.Each!.status).toBe('Failed');
    expect(byName.Each!.message).toBe(
      'Failed: item Each[2] failed: Failed after 3 attempts: Timed out after 300 ms.',
    );
    expect(byName.Handler!.status).toBe('Completed');
    const logs = await taskLogs(trellis.admin, workflowId, executionId, byName['Each[2]']!.id);
    expect(logs.filter((message) => message.startsWith('Attempt '))).toHaveLength(4);
  });

  it('cancels the running items with the run; the others end Canceled', async () => {
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([
        {
          name: 'Each',
          ...delay(60_000),
          forEach: { items: '[1, 2, 3, 4, 5]', parallelism: 2 },
        },
      ]),
    );
    await untilStatuses(trellis.admin, workflowId, executionId, {
      'Each[0]': 'Running',
      'Each[1]': 'Running',
    });
    await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path: { workflowId, executionId } },
    });
    const execution = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 30_000,
    });
    expect(execution.status).toBe('Canceled');
    const tasks = await eventually(async () => {
      const listed = await allTasks(workflowId, executionId);
      expect(listed.every((task) => task.status === 'Canceled')).toBe(true);
      return listed;
    });
    expect(tasks.map((task) => task.name)).toEqual([
      'Each',
      'Each[0]',
      'Each[1]',
      'Each[2]',
      'Each[3]',
      'Each[4]',
    ]);
    // The running ones were stopped well before their minute was up.
    for (const task of tasks.slice(1, 3)) {
      expect(Date.parse(task.endTime!) - Date.parse(task.startTime!)).toBeLessThan(30_000);
    }
  });

  it('refuses Item() and Index() outside a forEach task, and bad forEach settings, with 400s', async () => {
    const stored = async () => (await trellis.admin.GET('/workflows')).length;
    const before = await stored();
    expect(
      await addExpectingProblems(
        definition([{ name: 'Plain', type: noop, parameters: { value: '$[Item()]' } }]),
      ),
    ).toEqual([
      "tasks[0].parameters.value: Item() is valid only in a forEach task's parameters and executionCondition",
    ]);
    expect(
      await addExpectingProblems(
        definition(
          [{ name: 'Plain', type: noop, executionCondition: { expression: 'Index() > 1' } }],
          {
            outputs: { x: 'Item()' },
          },
        ),
      ),
    ).toEqual([
      "tasks[0].executionCondition.expression: Index() is valid only in a forEach task's parameters and executionCondition",
      "outputs.x: Item() is valid only in a forEach task's parameters and executionCondition",
    ]);
    const problems = await addExpectingProblems(
      definition([
        { name: 'A', type: noop, forEach: { items: 'Item()' } },
        { name: 'B', type: noop, forEach: { items: "Outputs('Nope').x" } },
        { name: 'C', type: noop, forEach: { items: '[1, 2' } },
        { name: 'D', type: noop, forEach: { items: '[1]', parallelism: 0 } },
        { name: 'E', type: noop, forEach: { items: '[1]' }, manualApproval: { enabled: true } },
        { name: 'A[1]', type: noop },
        { name: 'F', type: noop, forEach: {} },
      ]),
    );
    expect(problems).toEqual([
      'tasks[3].forEach.parallelism: must be >= 1',
      'tasks[6].forEach.items: is required',
    ]);
    expect(
      await addExpectingProblems(
        definition([{ name: 'G', type: noop, forEach: { items: '[1]', parallelism: 1001 } }]),
      ),
    ).toEqual(['tasks[0].forEach.parallelism: must be <= 1000']);
    const graph = await addExpectingProblems(
      definition([
        { name: 'A', type: noop, forEach: { items: 'Item()' } },
        { name: 'B', type: noop, forEach: { items: "Outputs('Nope').x" } },
        { name: 'C', type: noop, forEach: { items: '[1, 2' } },
        { name: 'E', type: noop, forEach: { items: '[1]' }, manualApproval: { enabled: true } },
        { name: 'A[1]', type: noop },
      ]),
    );
    expect(graph).toEqual([
      "tasks[0].forEach.items: Item() is valid only in a forEach task's parameters and executionCondition",
      "tasks[1].forEach.items: Outputs('Nope') names no task",
      expect.stringMatching(/^tasks\[2\]\.forEach\.items: cannot parse \$\[\[1, 2\]: /),
      'tasks[3].forEach: a forEach task cannot also have manualApproval enabled',
      "tasks[4].name: 'A[1]' is the name of an item of forEach task 'A'",
    ]);
    // Nothing was stored.
    expect(await stored()).toBe(before);
  });
});
