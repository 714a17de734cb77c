import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  definition,
  delay,
  executionLogs,
  expectBefore,
  noop,
  run,
  statuses,
  taskLogs,
  tasksOf,
} from '../support/engine-support.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

describe('DAG scheduling', () => {
  it('runs a diamond in dependency order and completes', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        { name: 'A', type: noop },
        { name: 'B', ...delay(200), dependencies: ['A'] },
        { name: 'C', ...delay(200), dependencies: ['A'] },
        { name: 'D', type: noop, dependencies: ['B', 'C'] },
      ]),
    );
    expect(execution.status).toBe('Completed');
    expect(execution.executionEnd).not.toBeNull();
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(Object.keys(tasks)).toEqual(['A', 'B', 'C', 'D']);
    for (const task of Object.values(tasks)) expect(task.status).toBe('Completed');
    expectBefore(tasks.A!, tasks.B!);
    expectBefore(tasks.A!, tasks.C!);
    expectBefore(tasks.B!, tasks.D!);
    expectBefore(tasks.C!, tasks.D!);
    // B and C ran side by side.
    expect(Date.parse(tasks.C!.startTime!)).toBeLessThan(Date.parse(tasks.B!.endTime!));
    expect(await taskLogs(trellis.admin, workflowId, executionId, tasks.B!.id)).toEqual([
      'Started.',
      expect.stringMatching(/^Completed in \d+ ms\.$/),
    ]);
    const logs = await executionLogs(trellis.admin, workflowId, executionId);
    expect(logs[0]).toBe('Execution started (4 tasks).');
    expect(logs.at(-1)).toMatch(/^Execution completed: All tasks finished: 4 completed\.$/);
  });

  it('keeps degreeOfParallelism as a rolling limit over a wide fan-out', async () => {
    const width = 12;
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition(
        [
          { name: 'root', type: noop },
          ...Array.from({ length: width }, (_, i) => ({
            name: `leaf-${i}`,
            // Uneven durations: a rolling limit starts the next leaf as soon as any one ends.
            ...delay(150 + (i % 3) * 150),
            dependencies: ['root'],
          })),
        ],
        { configuration: { degreeOfParallelism: 3 } },
      ),
    );
    expect(execution.status).toBe('Completed');
    const tasks = Object.values(await tasksOf(trellis.admin, workflowId, executionId)).filter((t) =>
      t.name.startsWith('leaf-'),
    );
    const events = tasks.flatMap((task) => [
      { at: Date.parse(task.startTime!), delta: 1 },
      { at: Date.parse(task.endTime!), delta: -1 },
    ]);
    // Ends before starts at the same instant: a slot freed and was taken at once.
    events.sort((a, b) => a.at - b.at || a.delta - b.delta);
    let running = 0;
    let peak = 0;
    for (const event of events) {
      running += event.delta;
      peak = Math.max(peak, running);
    }
    expect(peak).toBe(3);
    // Rolling, not waves: the fourth leaf started before the first three had all ended.
    const byStart = [...tasks].sort((a, b) => Date.parse(a.startTime!) - Date.parse(b.startTime!));
    const firstWaveEnd = Math.max(...byStart.slice(0, 3).map((task) => Date.parse(task.endTime!)));
    expect(Date.parse(byStart[3]!.startTime!)).toBeLessThan(firstWaveEnd);
  });

  it('skips a task whose condition is false and lets its dependants run', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition(
        [
          { name: 'A', type: noop },
          {
            name: 'Maybe',
            type: noop,
            dependencies: ['A'],
            executionCondition: { expression: "Variables('region') == 'us'" },
          },
          { name: 'After', type: noop, dependencies: ['Maybe'] },
        ],
        { variables: { region: 'eu' } },
      ),
    );
    expect(execution.status).toBe('Completed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(tasks.Maybe).toMatchObject({
      status: 'Skipped',
      message: "Skipped: the condition Variables('region') == 'us' is false.",
    });
    expect(tasks.After!.status).toBe('Completed');
    expect(await statuses(trellis.admin, workflowId, executionId)).toEqual({
      A: 'Completed',
      Maybe: 'Skipped',
      After: 'Completed',
    });
  });
});
