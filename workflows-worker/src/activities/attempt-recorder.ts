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
import { executionStartedLogKey } from '#protocol/messages.js';
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
  /**
   * The entry that opens the execution's log, which the run (one the API prepared) has not
   * written yet: it lands first, with the attempt's first entries.
   */
  startsRun?: string;
}

export interface RecorderOptions {
  /** The dedupe key of the attempt's `index`th log entry (by default, task, attempt and index). */
  keyOf?: (index: number) => string;
  /**
   * A plugin's attempt, which a stopping worker may cut short: its Running mark looks for an
   * earlier run of the same attempt that was, records it, and numbers this run after it.
   */
  findsInterruptions?: boolean;
  /** A Running mark written apart, if at all: settled before the outcome, which carries its start. */
  running?: { settle(): Promise<void>; startedAt: Date | undefined };
}

export type AttemptRecorder = ReturnType<typeof attemptRecorder>;

/** Writes an attempt's outcome and its entries (`recordAttempt`, or a statement doing more). */
export type OutcomeWrite = (
  outcome: taskExecutionRepository.AttemptOutcome,
  entries: NewLogEntry[],
) => Promise<unknown>;

/**
 * Records one attempt: Running, its log entries, its outcome. A run of an attempt that finds an
 * earlier run of it interrupted (`findsInterruptions`) records that run as an attempt of its
 * own and is shown as the next one: the task's `interruptedAttempts` shift the numbers the
 * workflow gives (`attempt`), which the workflow's retry decisions keep to, so an interruption
 * never uses up a retry.
 */
export function attemptRecorder(
  db: Kysely<Database>,
  attempt: RecordedAttempt,
  options: RecorderOptions = {},
) {
  const { executionId, taskExecutionId: taskId, run } = attempt;
  /** This run's log keys: task and attempt, and for a re-run of an interrupted one, its count. */
  let keyPrefix = `${taskId}:${attempt.attempt}`;
  const keyOf = options.keyOf ?? ((index: number) => `${keyPrefix}:${index}`);
  /** Entries not written yet: they land with the outcome, or with `flush`. */
  const logs: NewLogEntry[] = [];
  /** The run's opening entry, until it has landed with the first of the attempt's entries. */
  let opening: NewLogEntry | undefined =
    attempt.startsRun === undefined
      ? undefined
      : {
          executionId,
          taskExecutionId: null,
          dedupeKey: executionStartedLogKey,
          level: 'Info',
          message: attempt.startsRun,
          timeStamp: new Date(),
        };
  /** The entries to write now: the opening one first while it has not landed. */
  const unwritten = () => (opening ? [opening, ...logs] : [...logs]);
  /** The entries of `unwritten` landed. */
  const written = () => {
    opening = undefined;
    logs.length = 0;
  };
  /** A dry run's task: what it does, written with its outcome. */
  let dryRunPlan: TaskDryRunPlan | undefined;
  /** Entries logged by this run, written or not: the next one's index in its key. */
  let logged = 0;
  /** The task's interrupted runs so far, as the Running mark found them (0 until it has). */
  let interruptedAttempts = 0;
  /** Whether this run's Running mark landed: only then can a later run find it interrupted. */
  let marked = false;
  /** The number the task's log and the console show for this run. */
  const shown = () => attempt.attempt + interruptedAttempts;
  /** The entry `logStart` wrote, renumbered once the Running mark tells the number. */
  let startEntry: NewLogEntry | undefined;

  const entry = (level: LogLevel, message: string, exception?: string): NewLogEntry => ({
    executionId,
    taskExecutionId: taskId,
    dedupeKey: runKey(run, keyOf(logged)),
    level,
    message,
    exception: exception ?? null,
    timeStamp: new Date(),
  });

  const log = (level: LogLevel, message: string, exception?: string) => {
    logs.push(entry(level, message, exception));
    logged += 1;
  };

  const startMessage = () => (shown() === 1 ? 'Started.' : `Attempt ${shown()} started.`);

  /** Logs that the attempt started ("Started.", "Attempt 2 started."). */
  const logStart = () => {
    log('Info', startMessage());
    startEntry = logs.at(-1);
  };

  /**
   * The outcome, with the entries logged so far (kept if the write fails). `write`: how, when
   * the outcome lands in a statement that writes more (the run's end).
   */
  const record = async (
    status: taskExecutionRepository.AttemptOutcome['status'],
    message: string,
    details: { output?: unknown; at?: Date } = {},
    write: OutcomeWrite = (outcome, entries) =>
      taskExecutionRepository.recordAttempt(db, outcome, entries),
  ) => {
    await options.running?.settle();
    const startedAt = options.running?.startedAt;
    await write(
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
      unwritten(),
    );
    written();
  };

  /** Takes back the last entry logged: what it announced was not recorded after all. */
  const unlog = () => {
    if (logs.pop()) logged -= 1;
  };

  /**
   * The task is Running from `at`, in this attempt. When that write finds an earlier run of the
   * attempt interrupted, the interruption is logged (with the key the interrupted run would have
   * given it, so a graceful stop's own entry stands) and written at once with this run's
   * entries so far, renumbered and keyed as the run after it.
   */
  const markRunning = async (at: Date) => {
    const found = await taskExecutionRepository.markTaskRunning(db, {
      id: taskId,
      attempt: attempt.attempt,
      at,
      ...(run !== undefined ? { run } : {}),
      ...(options.findsInterruptions ? { findInterrupted: true } : {}),
    });
    if (!found || !options.findsInterruptions) return;
    marked = true;
    interruptedAttempts = found.interruptedAttempts;
    if (startEntry) startEntry.message = startMessage();
    const interrupted = found.interrupted;
    if (!interrupted) return;
    keyPrefix = `${taskId}:${attempt.attempt}.${interruptedAttempts}`;
    // Nothing of this run is written yet (this is its first write): its entries take new keys.
    logs.forEach((entry, index) => (entry.dedupeKey = runKey(run, keyOf(index))));
    const seconds = ((at.getTime() - interrupted.startedAt.getTime()) / 1000).toFixed(1);
    const number = shown() - 1;
    logs.unshift({
      ...interruptionEntry(
        number,
        `: its worker stopped before it ended (found ${seconds} s after it started)`,
      ),
      // Just before this run's own entries, which it precedes.
      timeStamp: new Date(at.getTime() - 1),
      dedupeKey: runKey(run, `${taskId}:interrupted:${interrupted.before}`),
    });
    await flush();
  };

  /** `how`: what follows "Attempt N interrupted" (its duration, the reason). */
  const interruptionEntry = (number: number, how: string): NewLogEntry =>
    entry(
      'Warning',
      `Attempt ${number} interrupted${how}. It runs again as attempt ${number + 1}; an interruption does not use up a retry.`,
    );

  /**
   * This run is being cut short (its worker stops): its entries so far and its interruption are
   * written now, rather than lost with the process. The key of the interruption is the one the
   * next run would give it, which then finds it written.
   */
  const interrupted = async (why: string) => {
    const startedAt = options.running?.startedAt;
    if (options.findsInterruptions && marked && startedAt) {
      const seconds = ((Date.now() - startedAt.getTime()) / 1000).toFixed(1);
      logs.push({
        ...interruptionEntry(shown(), ` after ${seconds} s: ${why}`),
        dedupeKey: runKey(run, `${taskId}:interrupted:${interruptedAttempts}`),
      });
    }
    await flush();
  };

  /** Writes the entries logged so far, without an outcome. */
  const flush = async () => {
    await appendLogs(db, unwritten());
    written();
  };

  /** Records the failure as `plan` says (logged, with its exception), then throws `TaskFailed`. */
  const failed = async (plan: FailurePlan, failure: Failure): Promise<never> => {
    await options.running?.settle(); // the number to say is known once the Running mark landed
    const { outcome, message, level } = attemptFailure(plan, shown(), failure);
    log(level, message, failure.exception);
    await record(outcome, message);
    throw taskFailedError(outcome, message);
  };

  /** A dry run's task: the plan its outcome is recorded with. */
  const plan = (decided: TaskDryRunPlan) => {
    dryRunPlan = decided;
  };

  return { log, logStart, record, unlog, markRunning, interrupted, flush, failed, plan };
}
