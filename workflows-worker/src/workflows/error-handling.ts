/**
 * A task's error handling (docs/ARCHITECTURE.md#errors): the task's settings merged over the
 * workflow's, and what happens when one attempt fails. Pure.
 */
import type { ErrorHandling, TaskDefinition } from '#definition/types.js';
import { retryDefaults, retryDelay } from './backoff.js';

/**
 * The task's error handling over the workflow's: the task's strategy wins (default `Abort`), the
 * retry policies merge field by field (task first), and `triggerTask` comes from whichever names
 * one (task first).
 */
export function mergeErrorHandling(
  task: ErrorHandling | undefined,
  workflow: ErrorHandling | undefined,
): ErrorHandling {
  const retryPolicy = { ...workflow?.retryPolicy, ...task?.retryPolicy };
  const triggerTask = task?.triggerTask ?? workflow?.triggerTask;
  return {
    strategy: task?.strategy ?? workflow?.strategy ?? 'Abort',
    ...(Object.keys(retryPolicy).length > 0 ? { retryPolicy } : {}),
    ...(triggerTask !== undefined ? { triggerTask } : {}),
  };
}

/**
 * What a failed attempt leads to, decided before the attempt runs so that the attempt's own
 * activity can record it together with the failure:
 * - `Retrying` (strategy `Retry` with retries left): wait `delayMilliseconds`, then attempt again;
 * - `Skipped` (strategy `Skip`): the task is skipped and dependants carry on;
 * - `Failed` (`Abort`, `TriggerTask`, or retries used up).
 * An error the plugin marks non-retryable turns `Retrying` into `Failed` (the activity does that).
 */
export type FailurePlan =
  | { outcome: 'Retrying'; delayMilliseconds: number; retry: number; maxRetries: number }
  | { outcome: 'Skipped' }
  | { outcome: 'Failed' };

/** The failure plan of attempt number `attempt` (1-based). */
export function failurePlan(
  handling: ErrorHandling,
  attempt: number,
  random: () => number,
): FailurePlan {
  switch (handling.strategy) {
    case 'Skip':
      return { outcome: 'Skipped' };
    case 'Retry': {
      const policy = handling.retryPolicy ?? {};
      const maxRetries = policy.maxRetries ?? retryDefaults.maxRetries;
      if (attempt > maxRetries) return { outcome: 'Failed' };
      return {
        outcome: 'Retrying',
        delayMilliseconds: retryDelay(policy, attempt, random),
        retry: attempt,
        maxRetries,
      };
    }
    default:
      return { outcome: 'Failed' };
  }
}

/**
 * Each task's failure sources: its `runOnFailureOf`, plus every other task whose merged error
 * handling is `TriggerTask` naming it.
 */
export function failureSources(
  tasks: readonly Pick<TaskDefinition, 'name' | 'runOnFailureOf' | 'errorHandling'>[],
  workflow: ErrorHandling | undefined,
): Map<string, string[]> {
  const sources = new Map(tasks.map((task) => [task.name, [...(task.runOnFailureOf ?? [])]]));
  for (const task of tasks) {
    const handling = mergeErrorHandling(task.errorHandling, workflow);
    const target = handling.triggerTask;
    if (handling.strategy !== 'TriggerTask' || target === undefined || target === task.name)
      continue;
    const list = sources.get(target);
    if (list && !list.includes(task.name)) list.push(task.name);
  }
  return sources;
}
