import { describe, expect, it } from 'vitest';
import type { TaskStatus } from '#protocol/statuses.js';
import { DagPlanner, type PlanTask, type TaskState } from './planner.js';

function task(name: string, extra: Partial<PlanTask> = {}): PlanTask {
  return { name, dependencies: [], failureSources: [], manualApproval: false, ...extra };
}

function states(entries: Record<string, TaskStatus | TaskState>): Map<string, TaskState> {
  return new Map(
    Object.entries(entries).map(([name, value]) => [
      name,
      typeof value === 'string' ? { status: value } : value,
    ]),
  );
}

const diamond = [
  task('A'),
  task('B', { dependencies: ['A'] }),
  task('C', { dependencies: ['A'] }),
  task('D', { dependencies: ['B', 'C'] }),
];

describe('DagPlanner readiness', () => {
  it('starts the roots first, then each task once all its dependencies completed', () => {
    const planner = new DagPlanner(diamond);
    expect(planner.plan(states({}), 10).start).toEqual(['A']);
    expect(planner.plan(states({ A: 'Running' }), 10).start).toEqual([]);
    expect(planner.plan(states({ A: 'Completed' }), 10).start).toEqual(['B', 'C']);
    expect(
      planner.plan(states({ A: 'Completed', B: 'Completed', C: 'Running' }), 10).start,
    ).toEqual([]);
    const last = planner.plan(states({ A: 'Completed', B: 'Completed', C: 'Completed' }), 10);
    expect(last.start).toEqual(['D']);
    expect(last.finished).toBeNull();
  });

  it('treats a dependency skipped by its condition or by the Skip strategy as satisfied', () => {
    const planner = new DagPlanner(diamond);
    const plan = planner.plan(
      states({
        A: 'Completed',
        B: { status: 'Skipped', skipCause: 'condition' },
        C: { status: 'Skipped', skipCause: 'strategy' },
      }),
      10,
    );
    expect(plan.start).toEqual(['D']);
    expect(plan.skip).toEqual([]);
  });

  it('skips everything below a failed task, cascading, and fails the run', () => {
    const planner = new DagPlanner(diamond);
    const plan = planner.plan(states({ A: 'Failed' }), 10);
    expect(plan.start).toEqual([]);
    expect(plan.skip).toEqual([
      { name: 'B', reason: "Skipped: dependency 'A' failed." },
      { name: 'C', reason: "Skipped: dependency 'A' failed." },
      { name: 'D', reason: "Skipped: dependency 'B' was skipped." },
    ]);
    expect(plan.finished).toEqual({ status: 'Failed', message: "Task 'A' failed." });
  });

  it('skips a task at once when one dependency failed even while another still runs', () => {
    const planner = new DagPlanner(diamond);
    const plan = planner.plan(states({ A: 'Completed', B: 'Failed', C: 'Running' }), 10);
    expect(plan.skip).toEqual([{ name: 'D', reason: "Skipped: dependency 'B' failed." }]);
    expect(plan.finished).toBeNull();
  });

  it('treats a canceled dependency as blocking', () => {
    const planner = new DagPlanner([task('A'), task('B', { dependencies: ['A'] })]);
    expect(planner.plan(states({ A: 'Canceled' }), 1).skip).toEqual([
      { name: 'B', reason: "Skipped: dependency 'A' was canceled." },
    ]);
  });
});

describe('DagPlanner failure handlers', () => {
  const tasks = [
    task('Store'),
    task('After', { dependencies: ['Store'] }),
    task('Alert', { failureSources: ['Store'] }),
  ];

  it('runs a handler when its source fails and counts the failure as handled', () => {
    const planner = new DagPlanner(tasks);
    const plan = planner.plan(states({ Store: 'Failed' }), 10);
    expect(plan.start).toEqual(['Alert']);
    expect(plan.skip).toEqual([{ name: 'After', reason: "Skipped: dependency 'Store' failed." }]);
    const done = planner.plan(
      states({ Store: 'Failed', After: 'Skipped', Alert: 'Completed' }),
      10,
    );
    expect(done.finished?.status).toBe('Completed');
  });

  it('still fails the run when the handler itself fails', () => {
    const planner = new DagPlanner(tasks);
    const plan = planner.plan(
      states({
        Store: 'Failed',
        After: { status: 'Skipped', skipCause: 'upstream' },
        Alert: 'Failed',
      }),
      10,
    );
    expect(plan.finished).toEqual({ status: 'Failed', message: "Task 'Alert' failed." });
  });

  it('skips a handler whose sources all ended without failing', () => {
    const planner = new DagPlanner(tasks);
    const plan = planner.plan(states({ Store: 'Completed' }), 10);
    expect(plan.start).toEqual(['After']);
    expect(plan.skip).toEqual([{ name: 'Alert', reason: "Skipped: none of 'Store' failed." }]);
  });

  it('waits while a source may still fail', () => {
    const planner = new DagPlanner([
      task('A'),
      task('B'),
      task('H', { failureSources: ['A', 'B'] }),
    ]);
    const plan = planner.plan(states({ A: 'Completed', B: 'Retrying' }), 10);
    expect(plan.start).toEqual([]);
    expect(plan.skip).toEqual([]);
    expect(planner.plan(states({ A: 'Completed', B: 'Failed' }), 10).start).toEqual(['H']);
  });

  it('does not count a handler skipped by its condition as handling the failure', () => {
    const planner = new DagPlanner(tasks);
    const plan = planner.plan(
      states({
        Store: 'Failed',
        After: { status: 'Skipped', skipCause: 'upstream' },
        Alert: { status: 'Skipped', skipCause: 'condition' },
      }),
      10,
    );
    expect(plan.finished?.status).toBe('Failed');
  });
});

describe('DagPlanner degree of parallelism', () => {
  const wide = [
    task('root'),
    ...['a', 'b', 'c', 'd', 'e'].map((n) => task(n, { dependencies: ['root'] })),
  ];

  it('starts no more than the free slots, in definition order', () => {
    const planner = new DagPlanner(wide);
    expect(planner.plan(states({ root: 'Completed' }), 2).start).toEqual(['a', 'b']);
  });

  it('is a rolling limit: one slot frees, one task starts, without waiting for the wave', () => {
    const planner = new DagPlanner(wide);
    const plan = planner.plan(states({ root: 'Completed', a: 'Completed', b: 'Running' }), 2);
    expect(plan.start).toEqual(['c']);
  });

  it('counts a task waiting out a retry backoff as holding its slot', () => {
    const planner = new DagPlanner(wide);
    expect(
      planner.plan(states({ root: 'Completed', a: 'Retrying', b: 'Running' }), 2).start,
    ).toEqual([]);
  });
});

describe('DagPlanner approvals', () => {
  const tasks = [task('Fetch'), task('Approve', { dependencies: ['Fetch'], manualApproval: true })];

  it('asks for an approval once the task is ready, and pauses while only a person can move', () => {
    const planner = new DagPlanner(tasks);
    const ready = planner.plan(states({ Fetch: 'Completed' }), 5);
    expect(ready.requestApproval).toEqual(['Approve']);
    expect(ready.start).toEqual([]);
    const waiting = planner.plan(states({ Fetch: 'Completed', Approve: 'WaitingForApproval' }), 5);
    expect(waiting.requestApproval).toEqual([]);
    expect(waiting.paused).toBe(true);
    expect(waiting.finished).toBeNull();
  });

  it('does not pause while another task runs, and starts an approved task when a slot frees', () => {
    const planner = new DagPlanner([...tasks, task('Other')]);
    const busy = planner.plan(
      states({ Fetch: 'Completed', Approve: 'WaitingForApproval', Other: 'Running' }),
      1,
    );
    expect(busy.paused).toBe(false);
    const approved = planner.plan(
      states({
        Fetch: 'Completed',
        Approve: { status: 'WaitingForApproval', approved: true },
        Other: 'Running',
      }),
      1,
    );
    expect(approved.start).toEqual([]);
    expect(approved.paused).toBe(false);
    const free = planner.plan(
      states({
        Fetch: 'Completed',
        Approve: { status: 'WaitingForApproval', approved: true },
        Other: 'Completed',
      }),
      1,
    );
    expect(free.start).toEqual(['Approve']);
  });
});

describe('DagPlanner outcome', () => {
  it('completes with a summary when every task completed or was skipped', () => {
    const planner = new DagPlanner(diamond);
    const plan = planner.plan(
      states({
        A: 'Completed',
        B: 'Completed',
        C: { status: 'Skipped', skipCause: 'condition' },
        D: 'Completed',
      }),
      1,
    );
    expect(plan.finished).toEqual({
      status: 'Completed',
      message: 'All tasks finished: 3 completed, 1 skipped.',
    });
  });

  it('names every unhandled failure', () => {
    const planner = new DagPlanner([task('A'), task('B')]);
    expect(planner.plan(states({ A: 'Failed', B: 'Failed' }), 1).finished?.message).toBe(
      "Tasks 'A', 'B' failed.",
    );
  });

  it('ends a graph that can never make progress instead of hanging', () => {
    const planner = new DagPlanner([
      task('A', { dependencies: ['B'] }),
      task('B', { dependencies: ['A'] }),
    ]);
    const plan = planner.plan(states({}), 1);
    expect(plan.skip.map((s) => s.name)).toEqual(['A', 'B']);
    expect(plan.finished?.status).toBe('Completed');
  });
});
