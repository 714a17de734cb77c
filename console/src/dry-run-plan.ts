/**
 * A dry run's plan as it ran, read from its tasks' `dryRun` field (what the worker decided for
 * each: where its output came from, its plugin and effects, its parameters resolved, the
 * approval it would have asked), with the branches skipped. A forEach task's items are rows of
 * their own (`Each[0]`, `Each[1]`, ...), whose plans the task's line gathers.
 */
import type { components } from '@trellis/sdk';
import type { TaskStatus } from './run-state.js';

type TaskDryRun = components['schemas']['TaskDryRun'];

/** Where a task's output came from in a dry run. */
export type OutputSource =
  | { kind: 'mock' }
  | { kind: 'recorded'; executionId: string }
  | { kind: 'generated' }
  /** Its plugin is pure: it ran for real. */
  | { kind: 'ran' };

export interface PlannedTask {
  name: string;
  status: TaskStatus | null;
  /** The task's message: for a skipped one, why (its condition, the branch not taken). */
  message: string;
  /** Its plugin, when the task performed nothing. */
  plugin: string | null;
  /** The plugin's declared effects (`calls`, `writes`, …) when it was not run. */
  effects: string | null;
  /** One per source its outputs came from (a `foreach` task's items may differ). */
  sources: OutputSource[];
  /** Its parameters, expressions resolved, as the task got them (the first item's for a foreach). */
  parameters: Record<string, unknown> | null;
  /** The approval it would have asked, with its comment. */
  approval: { id: string; comment: string } | null;
}

interface TaskFacts {
  status: TaskStatus;
  message: string;
}

/** A task row as the task list gives it: its name and its plan. */
export interface PlannedRow {
  name: string;
  dryRun: TaskDryRun | null;
}

/**
 * The plan of a dry run: its tasks in the definition's order (`names`), each with what its rows
 * (its own, its items') say it did.
 */
export function dryRunPlan(
  names: string[],
  tasks: Record<string, TaskFacts | undefined>,
  rows: readonly PlannedRow[],
): PlannedTask[] {
  return names.map((name) => {
    const task = tasks[name];
    const plans = rows
      .filter((row) => row.name === name || isItemOf(row.name, name))
      .flatMap((row) => (row.dryRun ? [row.dryRun] : []));
    const sources: OutputSource[] = [];
    for (const plan of plans) {
      const source = sourceOf(plan);
      if (source && !sources.some((known) => sameSource(known, source))) sources.push(source);
    }
    const notRun = plans.find((plan) => plan.source !== null && plan.source !== 'RanForReal');
    const ran = plans.find((plan) => plan.parameters !== null);
    const approval = plans.find((plan) => plan.approval !== null)?.approval ?? null;
    return {
      name,
      status: task?.status ?? null,
      message: task?.message ?? '',
      plugin: notRun?.plugin ?? null,
      effects: notRun?.effects ?? null,
      sources,
      parameters: ran?.parameters ?? null,
      approval: approval && { id: approval.approvalId, comment: approval.comment },
    };
  });
}

/** `Each[3]` is an item of `Each`. */
const isItemOf = (row: string, task: string) =>
  row.startsWith(`${task}[`) && /^\[\d+\]$/.test(row.slice(task.length));

function sourceOf(plan: TaskDryRun): OutputSource | null {
  switch (plan.source) {
    case 'Mock':
      return { kind: 'mock' };
    case 'Recorded':
      return { kind: 'recorded', executionId: plan.recordedFrom ?? '' };
    case 'Generated':
      return { kind: 'generated' };
    case 'RanForReal':
      return { kind: 'ran' };
    default:
      return null;
  }
}

const sameSource = (a: OutputSource, b: OutputSource) =>
  a.kind === b.kind &&
  (a.kind !== 'recorded' || (b.kind === 'recorded' && a.executionId === b.executionId));
