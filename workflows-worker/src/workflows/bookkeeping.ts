import { proxyLocalActivities, type LocalActivityOptions } from '@temporalio/workflow';
import type { TrellisActivities } from '../activities/index.js';

/**
 * Bookkeeping: short, idempotent database writes, run in the worker that runs the workflow.
 * Retried by Temporal until the database answers.
 */
const bookkeepingOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
} satisfies LocalActivityOptions;

/** The bookkeeping activities, with the summary the Temporal UI shows for the call. */
export function bookkeeping(summary: string) {
  return proxyLocalActivities<TrellisActivities>({ ...bookkeepingOptions, summary });
}
