/**
 * Pure DAG planning for one execution (docs/ARCHITECTURE.md#scheduling): given the tasks and where
 * each one is, decide what to start, what to skip, whether to ask for an approval, and when the
 * run is over. No I/O and no clock: the workflow calls `plan` after every change and carries
 * out the answer, so every scheduling rule is unit-tested here, away from Temporal.
 *
 * Rules:
 * - A dependency is satisfied when it is Completed, or Skipped by its condition or by its `Skip`
 *   error strategy (both mean "nothing to do, carry on"). It blocks for good when it Failed, was
 *   Canceled, or was Skipped because *it* could no longer run: that kind of skip propagates, so a
 *   chain below a failed task is skipped all the way down rather than running without the data
 *   it was built on.
 * - A task with failure sources (its `runOnFailureOf`, plus every task whose `TriggerTask`
 *   strategy names it) runs only when one of them Failed, and is skipped once all of them ended
 *   without failing. Its own `dependencies`, if any, must be satisfied as well.
 * - `degreeOfParallelism` is a rolling limit on tasks holding a slot (Running, or Retrying while
 *   waiting out a backoff): a ready task starts as soon as a slot frees. A task waiting for a
 *   person holds no slot; once approved it queues for one like any ready task.
 * - The run is finished when no task can still run. It Failed when some task Failed and no task
 *   handling that failure (a failure source's dependant) ever started; otherwise it Completed.
 */
import type { TaskStatus } from '#protocol/statuses.js';

/** The shape of a task the planner needs (names only: no parameters, no plugin). */
export interface PlanTask {
  name: string;
  dependencies: readonly string[];
  /** Tasks whose failure makes this one ready: `runOnFailureOf` plus `TriggerTask` sources. */
  failureSources: readonly string[];
  manualApproval: boolean;
}

/** Why a task was skipped; only `upstream` skips propagate to dependants. */
export type SkipCause = 'condition' | 'strategy' | 'upstream';

export interface TaskState {
  status: TaskStatus;
  skipCause?: SkipCause;
  /** WaitingForApproval only: a person approved; the task waits for a slot. */
  approved?: boolean;
}

export interface Plan {
  /** Tasks to start now, in definition order, within the free slots. */
  start: string[];
  /** Ready tasks that need a person first; they become WaitingForApproval. */
  requestApproval: string[];
  /** Pending tasks that can never run now, each with the reason (already cascaded). */
  skip: Array<{ name: string; reason: string }>;
  /** Nothing holds a slot or can start, and a task waits for a person. */
  paused: boolean;
  /** Set when no task can run any more. */
  finished: { status: 'Completed' | 'Failed'; message: string } | null;
}

const ACTIVE: ReadonlySet<TaskStatus> = new Set(['Running', 'Retrying']);
const TERMINAL: ReadonlySet<TaskStatus> = new Set(['Completed', 'Failed', 'Skipped', 'Canceled']);

/** Whether a task is done for good. */
export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL.has(status);
}

type Readiness = { kind: 'ready' } | { kind: 'waiting' } | { kind: 'blocked'; reason: string };

/** Plans the DAG of one execution; build once per run, then call `plan` after every change. */
export class DagPlanner {
  private readonly tasks: readonly PlanTask[];
  /** Task name → the tasks whose failure sources include it. */
  private readonly handlers = new Map<string, string[]>();

  constructor(tasks: readonly PlanTask[]) {
    this.tasks = tasks;
    for (const task of tasks) {
      for (const source of task.failureSources) {
        const list = this.handlers.get(source) ?? [];
        list.push(task.name);
        this.handlers.set(source, list);
      }
    }
  }

  /**
   * The next steps given every task's state. Does not change `states`; the caller applies the
   * skips, approvals and starts it carries out.
   */
  plan(states: ReadonlyMap<string, TaskState>, degreeOfParallelism: number): Plan {
    // Skips cascade: work on a view that already holds the skips decided in this call.
    const view = new Map(states);
    const skip: Plan['skip'] = [];
    let ready: PlanTask[] = [];
    for (let changed = true; changed;) {
      changed = false;
      ready = [];
      for (const task of this.tasks) {
        if (stateOf(view, task.name).status !== 'Pending') continue;
        const readiness = this.readiness(task, view);
        if (readiness.kind === 'blocked') {
          view.set(task.name, { status: 'Skipped', skipCause: 'upstream' });
          skip.push({ name: task.name, reason: readiness.reason });
          changed = true;
        } else if (readiness.kind === 'ready') {
          ready.push(task);
        }
      }
    }

    let active = 0;
    let waitingForPerson = false;
    const approved: string[] = [];
    for (const task of this.tasks) {
      const state = stateOf(view, task.name);
      if (ACTIVE.has(state.status)) active++;
      if (state.status === 'WaitingForApproval') {
        if (state.approved) approved.push(task.name);
        else waitingForPerson = true;
      }
    }

    const requestApproval = ready.filter((task) => task.manualApproval).map((task) => task.name);
    const runnable = new Set([
      ...approved,
      ...ready.filter((task) => !task.manualApproval).map((task) => task.name),
    ]);
    const slots = Math.max(0, degreeOfParallelism - active);
    const start = this.tasks
      .filter((task) => runnable.has(task.name))
      .slice(0, slots)
      .map((task) => task.name);

    const stuck =
      active === 0 &&
      runnable.size === 0 &&
      requestApproval.length === 0 &&
      !waitingForPerson &&
      this.tasks.some((task) => stateOf(view, task.name).status === 'Pending');
    if (stuck) {
      // Unreachable for a validated (acyclic) definition; kept so a bad graph ends instead of hanging.
      for (const task of this.tasks) {
        if (stateOf(view, task.name).status !== 'Pending') continue;
        view.set(task.name, { status: 'Skipped', skipCause: 'upstream' });
        skip.push({ name: task.name, reason: 'Skipped: the task can never become ready.' });
      }
    }

    const unfinished = this.tasks.some((task) => !isTerminal(stateOf(view, task.name).status));
    return {
      start,
      requestApproval,
      skip,
      paused: waitingForPerson && active === 0 && start.length === 0,
      finished: unfinished ? null : this.outcome(view),
    };
  }

  private readiness(task: PlanTask, view: ReadonlyMap<string, TaskState>): Readiness {
    let waiting = false;
    for (const dependency of task.dependencies) {
      const state = stateOf(view, dependency);
      if (state.status === 'Completed') continue;
      if (state.status === 'Skipped' && state.skipCause !== 'upstream') continue;
      if (state.status === 'Failed') {
        return { kind: 'blocked', reason: `Skipped: dependency '${dependency}' failed.` };
      }
      if (state.status === 'Canceled') {
        return { kind: 'blocked', reason: `Skipped: dependency '${dependency}' was canceled.` };
      }
      if (state.status === 'Skipped') {
        return { kind: 'blocked', reason: `Skipped: dependency '${dependency}' was skipped.` };
      }
      waiting = true;
    }
    if (task.failureSources.length > 0) {
      const statuses = task.failureSources.map((source) => stateOf(view, source).status);
      if (!statuses.includes('Failed')) {
        if (statuses.every(isTerminal)) {
          const names = task.failureSources.map((source) => `'${source}'`).join(', ');
          return { kind: 'blocked', reason: `Skipped: none of ${names} failed.` };
        }
        waiting = true;
      }
    }
    return waiting ? { kind: 'waiting' } : { kind: 'ready' };
  }

  private outcome(view: ReadonlyMap<string, TaskState>): NonNullable<Plan['finished']> {
    const unhandled = this.tasks
      .filter((task) => stateOf(view, task.name).status === 'Failed')
      .filter((task) => !(this.handlers.get(task.name) ?? []).some((h) => started(view, h)))
      .map((task) => `'${task.name}'`);
    if (unhandled.length > 0) {
      const subject =
        unhandled.length === 1 ? `Task ${unhandled[0]}` : `Tasks ${unhandled.join(', ')}`;
      return { status: 'Failed', message: `${subject} failed.` };
    }
    const counts = new Map<TaskStatus, number>();
    for (const task of this.tasks) {
      const status = stateOf(view, task.name).status;
      counts.set(status, (counts.get(status) ?? 0) + 1);
    }
    const summary = [...counts].map(([status, count]) => `${count} ${status.toLowerCase()}`);
    return { status: 'Completed', message: `All tasks finished: ${summary.join(', ')}.` };
  }
}

function stateOf(view: ReadonlyMap<string, TaskState>, name: string): TaskState {
  return view.get(name) ?? { status: 'Pending' };
}

/** A handler counts as having handled a failure once it left Pending other than by a skip. */
function started(view: ReadonlyMap<string, TaskState>, name: string): boolean {
  const status = stateOf(view, name).status;
  return status !== 'Pending' && status !== 'Skipped';
}
