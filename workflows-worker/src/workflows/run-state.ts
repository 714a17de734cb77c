import type { CancellationScope } from '@temporalio/workflow';
import type { RunEnd } from '../activities/index.js';
import type { TrellisExecutionId } from '#protocol/search-attributes.js';
import type { LocalAttemptBudget } from './local-attempt-budget.js';
import type { MessageHandlers } from './message-handlers.js';
import type { TaskState } from './planner.js';
import type { ProgressBatch } from './progress-batch.js';
import type { RunDefinition, RunTask } from '#protocol/run-definition.js';
import type { RunVersion } from './run-version.js';

/** The features of a run under the `temporal-ui` patch, and what it was started with. */
export interface RunFeatures {
  /** Under the `temporal-ui` patch. */
  ui: boolean;
  /** The run keeps `TrellisStatus` current. */
  statusAttribute: boolean;
  /** The run's id when an operator reset it from Temporal. */
  run: string | undefined;
  /** Search attributes to set with the first status (a scheduled run's execution id). */
  initialAttributes: Array<{ key: typeof TrellisExecutionId; value: string }>;
  /** Which versioned behaviours the run has. */
  version: RunVersion;
  /**
   * The entry that opens the execution's log, when the API prepared the run: its first write
   * (an attempt's entries, or a bookkeeping write) carries it. Absent for a run that prepared
   * itself, whose prepare activity wrote it.
   */
  started?: string;
}

/** What the parts of one run share: its loop, its approval desk and its tasks' attempts. */
export interface RunState {
  readonly executionId: string;
  readonly definition: RunDefinition;
  readonly features: RunFeatures;
  readonly messages: MessageHandlers;
  /** Every task's state, by name: what the planner plans from. */
  readonly states: Map<string, TaskState>;
  /** The bookkeeping gathered for the next write. */
  readonly batch: ProgressBatch;
  /** The run's limit of tasks at once. */
  readonly parallelism: number;
  /** Quick attempts per workflow task (local-attempt-budget.ts). */
  readonly localAttempts: LocalAttemptBudget;
  /** Activities and timers of tasks and approvals: canceled together on cancel or timeout. */
  readonly taskScope: CancellationScope;
  /** The run's own timeout fired. */
  readonly timedOut: boolean;
  task(name: string): RunTask;
  /** A task's last attempt recorded the run's end (`endsRun`): the run does not write it again. */
  endRecorded(end: RunEnd): void;
  /** The entry that opens the execution's log while no write of the run has carried it yet. */
  readonly unwrittenStart: string | undefined;
  /** A write that carried `unwrittenStart` landed. */
  startWritten(): void;
}
