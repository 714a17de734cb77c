/**
 * What one attempt of a task records, whatever runs it: a plugin (run-task.ts), a subworkflow
 * child (subworkflows.ts), a forEach task over its items (foreach.ts). Its log entries are kept
 * until its outcome is written, and land with it in one round trip; a failure is recorded as
 * the task's error handling planned it, and thrown as `TaskFailed` for the workflow to act on.
 */
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import type { Kysely } from 'kysely';
import { appendLogs, type NewLogEntry } from '#store/log-repository.js';
import type { Database, LogLevel, TaskDryRunPlan } from '#store/tables.js';
import * as taskExecutionRepository from '#store/task-execution-repository.js';
import type { FailurePlan } from '../workflows/error-handling.js';
import { runKey } from './reset-runs.js';

/** The `type` of the ApplicationFailure a failed attempt throws; never retried by Temporal. */
export const taskFailedType = 'TaskFailed';

/** The details of a `TaskFailed` failure: what the activity recorded. */
export interface TaskFailedDetails {
  outcome: 'Retrying' | 'Skipped' | 'Failed';
}

/** Why an attempt did not complete. */
export type Failure = { message: string; retryable: boolean; exception?: string };

/**
 * What a failed attempt leads to, as `onFailure` planned it (a failure no retry can fix is not
 * retried), and the message and level the task records and logs.
 */
export function attemptFailure(
  plan: FailurePlan,
  attempt: number,
  failure: Failure,
): { outcome: TaskFailedDetails['outcome']; message: string; level: LogLevel } {
  if (plan.outcome === 'Retrying' && failure.retryable) {
    return {
      outcome: 'Retrying',
      message: `Attempt ${attempt} failed: ${failure.message} Retrying in ${plan.delayMilliseconds} ms (retry ${plan.retry} of ${plan.maxRetries}).`,
      level: 'Warning',
    };
  }
  if (plan.outcome === 'Skipped') {
    return {
      outcome: 'Skipped',
      message: `Skipped after a failure (error strategy Skip): ${failure.message}`,
      level: 'Warning',
    };
  }
  return {
    outcome: 'Failed',
    message:
      attempt > 1
        ? `Failed after ${attempt} attempts: ${failure.message}`
        : `Failed: ${failure.message}`,
    level: 'Error',
  };
}

/** The non-retryable `TaskFailed` failure of an attempt that recorded `outcome`. */
export function taskFailedError(
  outcome: TaskFailedDetails['outcome'],
  message: string,
): ApplicationFailure {
  return ApplicationFailure.create({
    type: taskFailedType,
    message,
    nonRetryable: true,
    // An expected outcome the workflow handles, not a worker problem: logged at debug level.
    category: ApplicationFailureCategory.BENIGN,
    details: [{ outcome } satisfies TaskFailedDetails],
  });
}

/** The attempt a recorder writes: its task's row, its number, and the run that writes it. */
export interface RecordedAttempt {
  executionId: string;
  taskExecutionId: string;
  attempt: number;
  /** The run's id when an operator reset it from Temporal (reset-runs.ts). */
  run?: string;
}

export interface RecorderOptions {
  /** The dedupe key of the attempt's `index`th log entry (by default, task, attempt and index). */
  keyOf?: (index: number) => string;
  /** A Running mark written apart, if at all: settled before the outcome, which carries its start. */
  running?: { settle(): Promise<void>; startedAt: Date | undefined };
}

export type AttemptRecorder = ReturnType<typeof attemptRecorder>;

/** Records one attempt: Running, its log entries, its outcome. */
export function attemptRecorder(
  db: Kysely<Database>,
  attempt: RecordedAttempt,
  options: RecorderOptions = {},
) {
  const { executionId, taskExecutionId: taskId, run } = attempt;
  const keyOf = options.keyOf ?? ((index) => `${taskId}:${attempt.attempt}:${index}`);
  /** Entries not written yet: they land with the outcome, or with `flush`. */
  const logs: NewLogEntry[] = [];
  /** A dry run's task: what it does, written with its outcome. */
  let dryRunPlan: TaskDryRunPlan | undefined;

  const log = (level: LogLevel, message: string, exception?: string) => {
    logs.push({
      executionId,
      taskExecutionId: taskId,
      dedupeKey: runKey(run, keyOf(logs.length)),
      level,
      message,
      exception: exception ?? null,
      timeStamp: new Date(),
    });
  };

  /** The outcome, with the entries logged so far (kept if the write fails). */
  const record = async (
    status: taskExecutionRepository.AttemptOutcome['status'],
    message: string,
    details: { output?: unknown; at?: Date } = {},
  ) => {
    await options.running?.settle();
    const startedAt = options.running?.startedAt;
    await taskExecutionRepository.recordAttempt(
      db,
      {
        id: taskId,
        attempt: attempt.attempt,
        status,
        message,
        at: details.at ?? new Date(),
        ...(startedAt ? { startedAt } : {}),
        ...(details.output !== undefined ? { output: details.output } : {}),
        ...(dryRunPlan !== undefined ? { dryRun: dryRunPlan } : {}),
        ...(run !== undefined ? { run } : {}),
      },
      logs,
    );
    logs.length = 0;
  };

  /** Takes back the last entry logged: what it announced was not recorded after all. */
  const unlog = () => {
    logs.pop();
  };

  /** The task is Running from `at`, in this attempt. */
  const markRunning = async (at: Date) => {
    await taskExecutionRepository.markTaskRunning(db, {
      id: taskId,
      attempt: attempt.attempt,
      at,
      ...(run !== undefined ? { run } : {}),
    });
  };

  /** Writes the entries logged so far, without an outcome. */
  const flush = async () => {
    await appendLogs(db, logs.splice(0));
  };

  /** Records the failure as `plan` says (logged, with its exception), then throws `TaskFailed`. */
  const failed = async (plan: FailurePlan, failure: Failure): Promise<never> => {
    const { outcome, message, level } = attemptFailure(plan, attempt.attempt, failure);
    log(level, message, failure.exception);
    await record(outcome, message);
    throw taskFailedError(outcome, message);
  };

  /** A dry run's task: the plan its outcome is recorded with. */
  const plan = (decided: TaskDryRunPlan) => {
    dryRunPlan = decided;
  };

  return { log, record, unlog, markRunning, flush, failed, plan };
}
