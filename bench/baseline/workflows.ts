/**
 * The execution baselines: plain Temporal workflows running no-op activities in sequence (or
 * many at once), nothing else. Each runs its activities the way Trellis runs the tasks it is
 * compared with: a quick plugin's attempts (`Flow/NoOp`) as local activities, any other plugin's
 * (`Flow/Delay`) as regular ones, with the options Trellis gives them
 * (`attemptActivities` in workflows-worker/src/workflows/attempts.ts): the safety
 * start-to-close timeout, the retry policy, waiting for a cancellation to complete, and for
 * regular activities the heartbeat timeout.
 */
import {
  ActivityCancellationType,
  patched,
  proxyActivities,
  proxyLocalActivities,
  upsertSearchAttributes,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import { TrellisStatus } from '#protocol/search-attributes.js';
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

/** How a run's tasks run: a quick plugin's as local activities, any other's as regular ones. */
type Kind = 'local' | 'regular';

/**
 * For the execution benchmark's anatomy, the activities a `tasks`-task chain's run schedules and
 * nothing else: a local activity before the tasks and one after them (a run's preparation and
 * the record of its end), no-ops all.
 */
export async function bookendedNoOps(tasks: number, kind: Kind): Promise<void> {
  await local.noop();
  for (let task = 0; task < tasks; task++) await (kind === 'local' ? local : regular).noop();
  await local.noop();
}

/**
 * Everything a `tasks`-task chain's run asks of Temporal, with no-ops for what its activities
 * do: the start's search attributes and summaries (the benchmark gives them, as the API does), a
 * patch (its marker and `TemporalChangeVersion` upsert, as the run's `temporal-ui` patch), the
 * `TrellisStatus` upserts Running and Completed, and the activities of `bookendedNoOps` with the
 * summaries the Temporal UI shows.
 */
export async function trellisShapedNoOps(tasks: number, kind: Kind): Promise<void> {
  patched('bench-trellis-shape');
  await bookkeeping('Prepare the execution').noop();
  upsertSearchAttributes([{ key: TrellisStatus, value: 'Running' }]);
  for (let task = 0; task < tasks; task++) {
    const options = { ...attemptOptions, summary: `Task ${task}: attempt 1` };
    await (
      kind === 'local'
        ? proxyLocalActivities<typeof baselineActivities>(options)
        : proxyActivities<typeof baselineActivities>({ ...options, heartbeatTimeout: '5 seconds' })
    ).noop();
  }
  upsertSearchAttributes([{ key: TrellisStatus, value: 'Completed' }]);
  await bookkeeping('Record: execution Completed').noop();
}

function bookkeeping(summary: string) {
  return proxyLocalActivities<typeof baselineActivities>({ ...attemptOptions, summary });
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
