/**
 * The execution baselines: plain Temporal workflows running no-op activities in sequence (or
 * many at once), nothing else. Each runs its activities the way Trellis runs the tasks it is
 * compared with: a quick plugin's attempts (`Flow/NoOp`) as local activities, any other plugin's
 * (`Flow/Delay`) as regular ones, with the options Trellis gives them
 * (`attemptActivities` in workflows-worker/src/workflows/execution-workflow.ts): the safety
 * start-to-close timeout, the retry policy, waiting for a cancellation to complete, and for
 * regular activities the heartbeat timeout.
 */
import {
  ActivityCancellationType,
  proxyActivities,
  proxyLocalActivities,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import type { baselineActivities } from './activities.js';

const attemptOptions = {
  startToCloseTimeout: '30 days',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    nonRetryableErrorTypes: ['TaskFailed'],
  },
} satisfies LocalActivityOptions;

/** As a quick plugin's attempt: a local activity. */
const local = proxyLocalActivities<typeof baselineActivities>(attemptOptions);
/** As any other plugin's attempt: a regular activity, with a heartbeat timeout. */
const regular = proxyActivities<typeof baselineActivities>({
  ...attemptOptions,
  heartbeatTimeout: '5 seconds',
});

/** The baseline of a 3-task `Flow/NoOp` chain: three local no-op activities in sequence. */
export async function threeLocalNoOps(): Promise<void> {
  await local.noop();
  await local.noop();
  await local.noop();
}

/** The baseline of a 3-task `Flow/Delay` (0 ms) chain: three regular no-op activities in sequence. */
export async function threeNoOps(): Promise<void> {
  await regular.noop();
  await regular.noop();
  await regular.noop();
}

/** The baseline of a single `Flow/NoOp` task's latency: one local no-op activity. */
export async function oneLocalNoOp(): Promise<void> {
  await local.noop();
}

/**
 * `tasks` local no-op activities, at most `parallelism` at once: the floor Temporal itself sets
 * for the 2,000-task DAG of `Flow/NoOp` (no dependencies to track, no database).
 */
export async function manyLocalNoOps(tasks: number, parallelism: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < tasks) {
      next++;
      await local.noop();
    }
  };
  await Promise.all(Array.from({ length: Math.min(tasks, parallelism) }, lane));
}

/**
 * `tasks` regular no-op activities, at most `parallelism` at once, all in one workflow: what a
 * forEach task's items would cost a single history if they ran in the run's own workflow (the
 * `foreach` benchmark measures it to show why they run in chunk workflows instead).
 */
export async function manyNoOps(tasks: number, parallelism: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < tasks) {
      next++;
      await regular.noop();
    }
  };
  await Promise.all(Array.from({ length: Math.min(tasks, parallelism) }, lane));
}
