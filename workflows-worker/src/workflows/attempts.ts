/**
 * A task's attempts as Temporal sees them, shared by the run's tasks and a forEach task's items:
 * the activity options of an attempt, the summary the Temporal UI shows for it, and the outcome a
 * failed attempt recorded.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  type LocalActivityOptions,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { TaskFailedDetails, TrellisActivities } from '../activities/index.js';
import type { FailurePlan } from './error-handling.js';
import type { RunTask } from '#protocol/run-definition.js';

/** How long a worker may go silent before its attempt is re-run elsewhere. */
const HEARTBEAT_TIMEOUT = '5 seconds';

/**
 * Activity options of a task's attempts. The choices:
 * - A plugin failure (or a task timeout, enforced inside the activity so that it is recorded
 *   with the attempt) comes back as a non-retryable `TaskFailed` ApplicationFailure: the
 *   definition's error strategy decides, not Temporal.
 * - Everything else is infrastructure and Temporal retries the *same* attempt indefinitely:
 *   a dead worker (no heartbeat for 5 s; the activity heartbeats every second), a database
 *   outage, a worker shutdown. The attempt's writes are keyed by attempt number, so a re-run
 *   never records a task twice, and it is not counted as a failure.
 * - `startToCloseTimeout` is only a safety net above the task's own timeout.
 * - Cancellation waits for the activity to acknowledge, so the plugin has been aborted and the
 *   task recorded Canceled before the run moves on.
 * - A quick plugin's attempts are local activities: they run in this worker and are recorded
 *   as markers, saving a task queue round trip and a workflow task per attempt. The rest holds
 *   for them, except that they do not heartbeat: when this worker dies the workflow task times
 *   out, and the worker that resumes the run runs the same attempt again.
 */
export function attemptActivities(
  task: RunTask,
  workflowTimeout: number | undefined,
  summary: string,
) {
  const limit = task.timeoutMilliseconds ?? workflowTimeout;
  const options = {
    summary,
    startToCloseTimeout: limit !== undefined ? limit + 60_000 : '30 days',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      nonRetryableErrorTypes: ['TaskFailed'],
    },
  } satisfies LocalActivityOptions;
  return task.quick
    ? proxyLocalActivities<TrellisActivities>(options)
    : proxyActivities<TrellisActivities>({ ...options, heartbeatTimeout: HEARTBEAT_TIMEOUT });
}

/**
 * The outcome a failed attempt recorded, or null when the error is not a task failure. A
 * regular activity's failure arrives wrapped in an ActivityFailure, a local activity's as is.
 */
export function taskFailure(error: unknown): TaskFailedDetails['outcome'] | null {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  if (!(failure instanceof ApplicationFailure) || failure.type !== 'TaskFailed') return null;
  const details = failure.details?.[0] as TaskFailedDetails | undefined;
  return details?.outcome ?? 'Failed';
}

/**
 * What the Temporal UI shows for a task's attempt: the task's name and the attempt (Temporal's
 * own attempt count is the retries of this same attempt after a worker or database failure).
 */
export function attemptSummary(taskName: string, attempt: number, onFailure: FailurePlan): string {
  // A failure of the last attempt the error strategy allows fails the task: that is the total.
  const total =
    onFailure.outcome === 'Retrying' ? onFailure.maxRetries + 1 : attempt > 1 ? attempt : 0;
  return `Task ${taskName}: attempt ${attempt}${total > 1 ? ` of ${total}` : ''}`;
}
