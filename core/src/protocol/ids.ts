/**
 * Temporal ids derived from Trellis ids. Deriving them (instead of generating new ones) makes a
 * retried start idempotent: Temporal refuses a second run with the same workflow id.
 */

const executionPrefix = 'trellis-execution-';
const schedulePrefix = 'trellis-trigger-';

/** Temporal workflow id of the run behind one Trellis execution. */
export function executionWorkflowId(executionId: string): string {
  return executionPrefix + executionId;
}

/** Temporal Schedule id of one TimeBased trigger. */
export function scheduleId(triggerId: string): string {
  return schedulePrefix + triggerId;
}

/** The trigger id behind a schedule id, or null when the schedule is not one of ours. */
export function triggerIdOfSchedule(id: string): string | null {
  return id.startsWith(schedulePrefix) ? id.slice(schedulePrefix.length) : null;
}

/** Workflow id prefix of the runs a trigger's schedule starts (Temporal appends the fire time). */
export function scheduledWorkflowIdPrefix(triggerId: string): string {
  return 'trellis-scheduled-' + triggerId;
}
