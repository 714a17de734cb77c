import { sleep } from '@temporalio/workflow';
import type { RunVersion } from './run-version.js';

/**
 * Quick attempts per workflow task: their markers (about 0.5 KB each, more with long task
 * names) stay far below 4 MB, and a run pays one short timer per this many quick tasks (the
 * 10,000-task DAG: 14.5 s at this bound, 20.3 s at 500).
 */
export const LOCAL_ATTEMPTS_PER_TASK = 1_000;

/**
 * Why a bound (patch `bounded-workflow-tasks`): a workflow task's completion carries a marker for
 * each local activity that finished during it, and Temporal terminates a run whose completion
 * passes its 4 MB message limit (`GrpcMessageTooLarge`): a 10,000-task DAG of quick tasks did,
 * its first workflow task holding every attempt of its first ~8 seconds. Runs from before the
 * patch, and runs that never reach the bound (no marker is written then), behave as before.
 *
 * Counts the quick attempts a run starts. Past the bound it sets a 1 ms timer and starts no more
 * until it fires: the workflow task then completes as soon as the attempts already running have
 * ended, and the timer's firing starts the next one, with a fresh count. The count depends on
 * the workflow's own code only, so a replay makes the same decisions.
 */
export class LocalAttemptBudget {
  private started = 0;
  private boundary: Promise<void> | undefined;

  constructor(private readonly version: RunVersion) {}

  /**
   * Undefined when an attempt may start now (no promise, so within the bound a run behaves
   * exactly as before); otherwise what to wait for before asking again.
   */
  reserve(): Promise<void> | undefined {
    if (this.boundary === undefined) {
      if (this.started < LOCAL_ATTEMPTS_PER_TASK || !this.version.has('boundedWorkflowTasks')) {
        this.started++;
        return undefined;
      }
      this.boundary = sleep(1, {
        summary: `End the workflow task after ${LOCAL_ATTEMPTS_PER_TASK} quick attempts`,
      }).then(() => {
        this.boundary = undefined;
        this.started = 0;
      });
    }
    return this.boundary;
  }
}
