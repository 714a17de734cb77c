/** The tables of runs: executions, their tasks, logs, events and concurrency slots. */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { LogLevel, PluginEffects } from '@trellis/plugin-kit';
import type { ApprovalStatus, ExecutionStatus, TaskStatus } from '#protocol/statuses.js';
import type { Timestamp } from './columns.js';
import type { ProjectIdColumn } from './projects.js';

export type { ApprovalStatus, ExecutionStatus, TaskStatus };
/** Log entry levels: the ones plugins log at (the plugin contract's), which the engine uses too. */
export type { LogLevel };
export interface WorkflowExecutionTable {
  id: string;
  /** Its workflow's project. */
  projectId: ProjectIdColumn;
  workflowId: string;
  workflowName: string;
  /** Snapshot of the definition text at start; later edits do not affect the run. */
  definition: string;
  status: ExecutionStatus;
  message: string;
  triggerId: string | null;
  /** Temporal workflow id, derived from the execution id. */
  temporalWorkflowId: string;
  /** The Temporal namespace of its run; null: `Temporal.Namespace`. */
  temporalNamespace: ColumnType<string | null, string | null | undefined, never>;
  executionStart: Timestamp;
  executionEnd: Timestamp | null;
  /** The inputs the run was given, defaults filled in (JSON); `{}` when it takes none. */
  inputs: ColumnType<Record<string, unknown>, string | undefined, string>;
  /** The definition's `outputs` evaluated when the run completed (JSON); null until then. */
  outputs: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** The execution this one reruns; null for a first run. */
  rerunOf: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * The workflow revision the definition snapshot is; null for a run of a definition replaced
   * before revisions were kept.
   */
  revision: ColumnType<number | null, number | null | undefined, number | null>;
  /**
   * The Temporal run that took this row over after an operator reset the execution's run
   * (Temporal UI or CLI); null while the execution's first run writes it.
   */
  temporalRunId: ColumnType<string | null, string | null | undefined, string | null>;
  /** The execution whose task started this one as a subworkflow; null for any other run. */
  parentExecutionId: ColumnType<string | null, string | null | undefined, string | null>;
  /** That task's row. */
  parentTaskExecutionId: ColumnType<string | null, string | null | undefined, string | null>;
  /** That task's name. */
  parentTaskName: ColumnType<string | null, string | null | undefined, string | null>;
  /** The user who started the run; null for scheduled, webhook and older runs. */
  startedBy: ColumnType<string | null, string | null | undefined, string | null>;
  /** A dry run: only its pure tasks run for real (docs/ARCHITECTURE.md#dry-runs). */
  dryRun: ColumnType<boolean, boolean | undefined, never>;
  /** A dry run's outputs given by its request, by task name (JSON); null when none. */
  dryRunMocks: ColumnType<Record<string, unknown> | null, string | null | undefined, never>;
  /**
   * The test case a dry run runs (`POST /workflows/{workflowId}/tests`): its tasks take no
   * recorded output. Null for every other run.
   */
  dryRunTestCase: ColumnType<string | null, string | null | undefined, never>;
}
export interface TaskExecutionTable {
  id: string;
  executionId: string;
  workflowId: string;
  name: string;
  /** Position of the task in the definition, for stable ordering. */
  position: number;
  status: TaskStatus;
  message: string;
  /** Attempts started so far (0 before the first). */
  attempts: Generated<number>;
  /**
   * Runs of an attempt cut short by their worker stopping, each shown as an attempt of its own:
   * the task has run `attempts + interruptedAttempts` times.
   */
  interruptedAttempts: Generated<number>;
  /** When the latest run of the current attempt began (null before the first, and for rows from before). */
  attemptStartTime: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  startTime: Timestamp | null;
  endTime: Timestamp | null;
  /** A completed task's output (JSON), read by later tasks' expressions; null otherwise. */
  output: ColumnType<unknown, string | null | undefined, string | null>;
  /**
   * The Temporal run that took this row over after an operator reset the execution's run
   * (Temporal UI or CLI); null while the execution's first run writes it.
   */
  temporalRunId: ColumnType<string | null, string | null | undefined, string | null>;
  /** An item of a forEach task (`Task[3]`): that task's row; null for the definition's tasks. */
  foreachTaskId: ColumnType<string | null, string | null | undefined, string | null>;
  /** An item's position in its task's list (null for the definition's tasks). */
  itemIndex: ColumnType<number | null, number | null | undefined, number | null>;
  /** An item's value, read by `Item()` (JSON; null for the definition's tasks). */
  item: ColumnType<unknown, string | null | undefined, string | null>;
  /**
   * What a dry run's task did, as the worker decided it (JSON, `TaskDryRunPlan`); null for a
   * real run's task, and before the task ran.
   */
  dryRun: ColumnType<TaskDryRunPlan | null, string | null | undefined, string | null>;
}

/** Where a dry run's task took its output from. */
export type DryRunOutputSource = 'Mock' | 'Recorded' | 'Generated' | 'RanForReal';

/** What a dry run's task did (docs/ARCHITECTURE.md#dry-runs): the plan the console shows. */
export interface TaskDryRunPlan {
  /** Set once the task ran: where its output came from (RanForReal: its plugin is pure). */
  source?: DryRunOutputSource;
  /** Recorded only: the real execution whose output it took. */
  recordedFrom?: string | null;
  /** Its plugin's type. */
  plugin?: string;
  /** The plugin's declared effects. */
  effects?: PluginEffects;
  /** Its parameters, expressions resolved. */
  parameters?: Record<string, unknown>;
  /** The approval it would have waited for, approved at once. */
  approval?: { approvalId: string; comment: string };
}
export interface LogEntryTable {
  id: string;
  executionId: string;
  /** null for execution-level entries. */
  taskExecutionId: string | null;
  /** Monotonic order within the table. */
  seq: Generated<string>;
  /**
   * Idempotency key unique per execution, e.g. `${taskExecutionId}:${attempt}:${n}`, so a
   * retried activity or replayed workflow writing the same entry again inserts nothing.
   */
  dedupeKey: string;
  level: LogLevel;
  message: string;
  exception: string | null;
  timeStamp: Timestamp;
}
/** What an execution event is about. */
export type ExecutionEventType = 'execution' | 'task' | 'log' | 'approval';
/**
 * The event log of an execution, written by database triggers (migration
 * `2026-11-25T00-00-00-execution-events`), never by the application.
 */
export interface ExecutionEventTable {
  executionId: string;
  /** 1, 2, 3... within the execution, in commit order. */
  seq: string;
  type: ExecutionEventType;
  /** The changed row's fields (JSON); null for a log event, whose entry is `logEntryId`. */
  data: Record<string, unknown> | null;
  logEntryId: string | null;
  recordedAt: Date;
}
/**
 * An execution holding a slot of its workflow's concurrency key, or waiting in line for one
 * (`configuration.concurrency`); the row goes when the execution ends.
 */
export interface ConcurrencySlotTable {
  executionId: string;
  workflowId: string;
  key: string;
  /** The limit of the execution's own definition. */
  slotLimit: number;
  holding: boolean;
  /** Chosen to be canceled by a newer execution (`onLimit: CancelOldest`). */
  preempted: ColumnType<boolean, boolean | undefined, boolean>;
  /** The order of the queue. */
  seq: ColumnType<string, never, never>;
  queuedAt: ColumnType<Date, Date | string | undefined, Date | string>;
  heldAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export type WorkflowExecutionRow = Selectable<WorkflowExecutionTable>;
export type TaskExecutionRow = Selectable<TaskExecutionTable>;
export type LogEntryRow = Selectable<LogEntryTable>;
