/** The execution baseline's workflows: no-op activities in sequence, nothing else. */
import { proxyActivities } from '@temporalio/workflow';
import type { baselineActivities } from './activities.js';

const { noop } = proxyActivities<typeof baselineActivities>({ startToCloseTimeout: '1 minute' });

/** Three no-op activities in sequence: the baseline of a 3-task chain. */
export async function threeNoOps(): Promise<void> {
  await noop();
  await noop();
  await noop();
}

/** One no-op activity: the baseline of a single-task execution's latency. */
export async function oneNoOp(): Promise<void> {
  await noop();
}

/**
 * `tasks` no-op activities, at most `parallelism` at once: the floor Temporal itself sets for
 * the 2,000-task DAG (no dependencies to track, no database).
 */
export async function manyNoOps(tasks: number, parallelism: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < tasks) {
      next++;
      await noop();
    }
  };
  await Promise.all(Array.from({ length: Math.min(tasks, parallelism) }, lane));
}
