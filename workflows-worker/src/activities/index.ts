/**
 * The activities of the `trellisExecution` workflow. Bookkeeping (`prepareExecution`,
 * `recordProgress`, `evaluateOutputs`) runs as local activities: short database work that needs
 * no task queue round trip. `runTaskAttempt` is a regular activity: it may run for long,
 * heartbeats, can be cancelled, and is picked up by another worker when this one dies; for a task whose plugin is
 * quick it runs as a local activity instead. In a run an operator reset from Temporal, each
 * takes the execution over first (reset-runs.ts).
 */
import { createExecutionLog } from '#platform/observability/execution-log.js';
import { noMetrics } from '#platform/observability/metrics.js';
import { concurrencyActivities } from './concurrency.js';
import { DefinitionCache } from './definitions.js';
import { deliverNotificationActivity } from './deliver-notification.js';
import type { ActivityDeps, EngineDeps } from './deps.js';
import { evaluateOutputsActivity } from './evaluate-outputs.js';
import { forEachActivities } from './foreach.js';
import { prepareExecutionActivity } from './prepare-execution.js';
import { createRunClaims } from './reset-runs.js';
import { recordProgressActivity } from './record-progress.js';
import { runTaskActivity } from './run-task.js';
import { subworkflowActivities } from './subworkflows.js';

export type { ActivityDeps } from './deps.js';
export type { LeaveInput, Preemption, SlotKey, Waiting } from './concurrency.js';
export type { OutputsResult } from './evaluate-outputs.js';
export type { PrepareInput, PrepareResult } from './prepare-execution.js';
export type { OutputsInput } from './evaluate-outputs.js';
export type { ForEachEnd, ForEachFinish, ForEachStart, ForEachTaskInput } from './foreach.js';
export type {
  ApprovalOutcome,
  DecisionClaim,
  EngineLog,
  ProgressInput,
  ProgressResult,
  SettledDecision,
} from './record-progress.js';
export { taskFailedType, type TaskFailedDetails } from './attempt-recorder.js';
export type { AttemptInput, AttemptResult, RunEnd } from './run-task.js';
export type { SubworkflowAttemptInput, SubworkflowStart } from './subworkflows.js';

/** The activity implementations, bound to one worker's database, runner and logger. */
export function createActivities(given: ActivityDeps) {
  const metrics = given.metrics ?? noMetrics;
  const deps: EngineDeps = {
    ...given,
    metrics,
    executionLog: createExecutionLog(given.logger, metrics),
    claimRun: createRunClaims(given.db, given.logger),
  };
  const definitions = new DefinitionCache(deps.db, deps.config.Definitions);
  return {
    prepareExecution: prepareExecutionActivity(deps, definitions),
    recordProgress: recordProgressActivity(deps, definitions),
    runTaskAttempt: runTaskActivity(deps, definitions),
    evaluateOutputs: evaluateOutputsActivity(deps, definitions),
    ...concurrencyActivities(deps),
    ...subworkflowActivities(deps, definitions),
    ...forEachActivities(deps, definitions),
    deliverNotification: deliverNotificationActivity(deps),
  };
}

export type TrellisActivities = ReturnType<typeof createActivities>;
