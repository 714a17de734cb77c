import {
  context as otelContext,
  propagation,
  SpanStatusCode,
  trace,
  type Span,
} from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { evaluateCondition, resolveValue } from '#definition/expressions/evaluate.js';
import type { PluginTraceContext } from '#plugin-host/contract.js';
import { createPluginLogger } from '#plugin-host/runner.js';
import { finishExecution, type Ending } from '#application/executions/finish-execution.js';
import type { NewLogEntry } from '#store/log-repository.js';
import {
  attemptChange,
  type AttemptChange,
  type AttemptOutcome,
} from '#store/task-execution-repository.js';
import { canceledWhileRunning } from '#protocol/messages.js';
import type { FailurePlan } from '../workflows/error-handling.js';
import {
  attemptRecorder,
  taskFailedType,
  type Failure,
  type TaskFailedDetails,
} from './attempt-recorder.js';
import { expressionScope, taskOf, type DefinitionCache } from './definitions.js';
import type { EngineDeps } from './deps.js';
import { dryRunDecision, resolvedParametersMessage, type DryRunDecision } from './dry-run.js';
import { permanentCause } from './permanent-failures.js';
import { runKey } from './reset-runs.js';
import { assertPluginAllowed, taskPlugin, type TaskPlugin } from './task-plugin.js';

/** One attempt of one task. */
export interface AttemptInput {
  executionId: string;
  taskExecutionId: string;
  taskName: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** Check the task's condition first (first attempt of a task that needed no approval). */
  evaluateCondition: boolean;
  /** The task's own limit for one attempt. */
  timeoutMilliseconds?: number;
  /** What a failure of this attempt leads to (the workflow decided it, jitter included). */
  onFailure: FailurePlan;
  /** The run's id when an operator reset it from Temporal (reset-runs.ts). */
  run?: string;
  /**
   * An item of a forEach task: its index (`taskExecutionId` is the item's row). Absent for every
   * other task.
   */
  item?: number;
  /**
   * How the run ends if this attempt completes its task: the workflow found every other task
   * finished, so the attempt records the run's end with the task's outcome, in one statement,
   * and the run writes nothing more (one activity fewer per run). Absent when the run has more
   * to do or its end needs more than a write (declared outputs to evaluate).
   */
  endsRun?: RunEnd;
  /**
   * The entry that opens the execution's log, for a run the API prepared that has written
   * nothing yet: the attempt writes it before its own entries (attempt-recorder.ts).
   */
  startsRun?: string;
}

/** A run's end, as the workflow would record it: the execution's outcome and its log entry. */
export interface RunEnd {
  status: 'Completed' | 'Failed';
  message: string;
  log: { level: 'Info' | 'Error'; message: string; key: string };
}

/**
 * What came of an attempt that did not fail. `ended`: the attempt also recorded the run's end
 * (`endsRun`), which the run then does not write again; absent in histories from before.
 */
export type AttemptResult =
  { status: 'Completed'; ended?: true } | { status: 'Skipped'; message: string };

/** How often a running plugin heartbeats; cancellation and a dead worker are noticed this fast. */
const HEARTBEAT_INTERVAL_MS = 1000;

/** A task still running after this long is shown Running; quicker ones go straight to done. */
const RUNNING_MARK_DELAY_MS = 250;

class AttemptTimeout extends Error {
  constructor(readonly milliseconds: number) {
    super(`Timed out after ${milliseconds} ms.`);
    this.name = 'AttemptTimeout';
  }
}

/**
 * Runs one attempt of a task and records everything about it (status, times, message, output,
 * the plugin's log entries and the engine's) in two writes: Running at the start, the outcome
 * with all logs at the end. The plugin's failures come back as non-retryable `TaskFailed`
 * ApplicationFailures so the definition's error strategy decides what follows, and so do
 * errors no retry can fix (`permanentCause`: a definition too deep to resolve, an output the
 * database refuses); anything else thrown here (the database is down, the worker is shutting
 * down) is infrastructure, and Temporal re-runs the same attempt, which the idempotent writes
 * make safe.
 */
export function runTaskActivity(deps: EngineDeps, definitions: DefinitionCache) {
  const { db, runner, metrics, tracer, claimRun } = deps;

  /**
   * Sets `attemptOf.projectId` once the execution is loaded, and `attemptOf.plugin` to the
   * plugin's type once the task's `type` resolves to one.
   */
  async function runTaskAttempt(
    input: AttemptInput,
    attemptOf: { plugin: string; projectId?: string },
  ): Promise<AttemptResult> {
    const context = Context.current();
    const { executionId, taskExecutionId: taskId, attempt, run } = input;
    await claimRun(executionId, run);
    // A re-run Temporal makes of an attempt (the worker that ran it stopped) marks itself
    // Running at once, which finds the run before it interrupted; a run of a local attempt
    // finds it with its usual mark. A retry does too (the failure path, not the common one):
    // the mark tells it the task's interrupted runs, which its log's attempt number counts.
    const rerun = !context.info.isLocal && context.info.attempt > 1;
    const running = new RunningMark(rerun || attempt > 1 ? 0 : RUNNING_MARK_DELAY_MS);
    const recorder = attemptRecorder(db, input, { running, findsInterruptions: true });
    const { log, record } = recorder;
    const failed = (failure: Failure) => recorder.failed(input.onFailure, failure);

    let loaded;
    let task;
    try {
      loaded = await definitions.get(executionId);
      attemptOf.projectId = loaded.execution.projectId;
      task = taskOf(loaded, input.taskName);
    } catch (error) {
      const cause = permanentCause(error);
      if (cause === null) throw error;
      return failed({ message: `The task cannot run: ${cause}`, retryable: false });
    }

    let scope;
    try {
      scope = await expressionScope(
        db,
        loaded,
        task.name,
        input.item === undefined ? undefined : { taskExecutionId: taskId, index: input.item },
      );
      const condition = task.executionCondition?.expression;
      if (
        input.evaluateCondition &&
        condition !== undefined &&
        !evaluateCondition(condition, scope)
      ) {
        const message = `Skipped: the condition ${condition} is false.`;
        log('Info', message);
        await record('Skipped', message);
        return { status: 'Skipped', message };
      }
    } catch (error) {
      const cause = isExpressionError(error) ? error.message : permanentCause(error);
      if (cause === null) throw error;
      return failed({
        message: `The condition could not be evaluated: ${cause}`,
        retryable: false,
      });
    }

    const started = running.start((at) => recorder.markRunning(at));
    recorder.logStart();

    let parameters: Record<string, unknown>;
    let plugin: TaskPlugin;
    try {
      parameters = resolveValue(task.parameters ?? {}, scope) as Record<string, unknown>;
      if (task.type === undefined) {
        // Only a run from before subworkflows gets here with one: it cannot start a child.
        throw ApplicationFailure.nonRetryable(
          `Task '${task.name}' runs a workflow, which this run cannot start.`,
        );
      }
      plugin = await taskPlugin(db, loaded.execution.projectId, task.type);
      attemptOf.plugin = plugin.type;
      await assertPluginAllowed(db, loaded.execution.projectId, task.name, plugin.type);
    } catch (error) {
      const cause =
        isExpressionError(error) || isNonRetryable(error)
          ? (error as Error).message
          : permanentCause(error);
      if (cause === null) throw error;
      return failed({ message: cause, retryable: false });
    }

    if (loaded.execution.dryRun) {
      let dryRun;
      try {
        log('Info', resolvedParametersMessage(parameters));
        dryRun = await dryRunDecision(deps, loaded, task.name, plugin, parameters, input.item);
      } catch (error) {
        const cause = permanentCause(error);
        if (cause === null) throw error;
        return failed({ message: cause, retryable: false });
      }
      // Every outcome recorded from here on carries the plan, a pure task's too.
      recorder.plan(dryRun.plan);
      if (dryRun.instead) return recordDryRunOutput(dryRun.instead);
    }

    // The plugin's signal fires on a cancel from the workflow or on the task's timeout.
    const controller = new AbortController();
    const abortOnCancel = () => controller.abort(context.cancellationSignal.reason);
    context.cancellationSignal.addEventListener('abort', abortOnCancel);
    const timeout = input.timeoutMilliseconds;
    const timer =
      timeout !== undefined
        ? setTimeout(() => controller.abort(new AttemptTimeout(timeout)), timeout)
        : undefined;
    let output: unknown;
    let failure: Failure | undefined;
    const span = tracer?.startSpan(`plugin ${plugin.type}`, {
      attributes: {
        'trellis.plugin.type': plugin.type,
        'trellis.task.name': task.name,
        'trellis.execution_id': executionId,
        'trellis.task.attempt': attempt,
      },
    });
    try {
      const run = runner.run({
        ...plugin,
        parameters,
        signal: controller.signal,
        logger: createPluginLogger((level, message, exception) => log(level, message, exception)),
        heartbeat: context.info.isLocal ? () => {} : (details) => context.heartbeat(details),
        task: {
          name: task.name,
          executionId,
          attempt,
          idempotencyKey: runKey(input.run, `${executionId}:${taskId}:${attempt}`),
        },
        ...(timeout !== undefined ? { timeoutMilliseconds: timeout } : {}),
        ...(span && traceContextOf(span)),
      });
      // A plugin that ignores its signal must not hold the attempt: stop waiting when it fires
      // (what it does after that is ignored).
      run.catch(() => {});
      output = await Promise.race([run, rejectWhenAborted(controller.signal)]);
    } catch (error) {
      if (context.cancellationSignal.aborted) {
        if (context.info.isLocal && context.cancellationDetails?.cancelRequested) {
          // A local attempt is also canceled when its workflow leaves this worker's cache (the
          // worker stops, the cache is full), and it cannot tell which happened. So it records
          // nothing: on a cancel of the run the workflow records the task Canceled; otherwise
          // the workflow runs this same attempt again wherever it resumes.
          throw new CancelledFailure(canceledWhileRunning);
        }
        if (!context.cancellationDetails?.cancelRequested) {
          // Worker shutdown, a lost heartbeat, the safety timeout: not the task's doing. Failing
          // retryably (never as "canceled", which would read as the user's cancel) makes
          // Temporal run this same attempt again, here or on another worker. What it logged is
          // written first, with its interruption; should that fail, the next run records the
          // interruption from the task's row.
          const why = describeInterruption(context);
          await running.settle().catch(() => {});
          await recorder
            .interrupted(why)
            .catch((error: unknown) =>
              deps.logger.warn(
                { executionId, err: error },
                'The log of an interrupted attempt could not be written',
              ),
            );
          throw ApplicationFailure.retryable(
            `The attempt was interrupted (${why}); it runs again.`,
            'AttemptInterrupted',
          );
        }
        log('Warning', canceledWhileRunning);
        await record('Canceled', canceledWhileRunning);
        throw new CancelledFailure(canceledWhileRunning);
      }
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : error;
      failure =
        reason instanceof AttemptTimeout
          ? { message: reason.message, retryable: true }
          : {
              message: errorMessage(reason),
              retryable: !isNonRetryable(reason),
              ...exceptionOf(reason),
            };
    } finally {
      clearTimeout(timer);
      running.cancel();
      context.cancellationSignal.removeEventListener('abort', abortOnCancel);
      if (span) endPluginSpan(span, failure);
    }
    if (failure) return failed(failure);

    return complete(`Completed in ${Date.now() - started.getTime()} ms.`, output);

    /** A dry run's task that performs nothing completes with the output it was given. */
    function recordDryRunOutput(
      dryRun: NonNullable<DryRunDecision['instead']>,
    ): Promise<AttemptResult> {
      running.cancel();
      return complete(dryRun.message, dryRun.output);
    }

    async function complete(message: string, value: unknown): Promise<AttemptResult> {
      log('Info', message);
      if (input.endsRun !== undefined) {
        try {
          await record('Completed', message, { output: value ?? null }, withRunEnd);
          return { status: 'Completed', ended: true };
        } catch (error) {
          // Written apart below: the outcome first, then the end, as a run whose end could not
          // ride on its last task.
          deps.logger.warn(
            { executionId, err: error },
            'The task outcome and the run end could not be written together; writing them apart',
          );
        }
      }
      try {
        await record('Completed', message, { output: value ?? null });
      } catch (error) {
        const cause = permanentCause(error);
        if (cause === null) throw error;
        recorder.unlog(); // not completed after all
        return failed({ message: `The output could not be stored: ${cause}`, retryable: false });
      }
      return (await recordedEnd()) ? { status: 'Completed', ended: true } : { status: 'Completed' };
    }

    /** Writes the outcome and the run's end (`endsRun`) in one statement, one round trip. */
    function withRunEnd(outcome: AttemptOutcome, entries: NewLogEntry[]) {
      const end = runEnd(input.endsRun!, entries, attemptChange(db, outcome));
      return finishExecution(deps, executionId, end);
    }

    /**
     * The run's end the workflow gave, its entry after `entries` (the last task's); with
     * `alongside`, the task's outcome lands in the same statement.
     */
    function runEnd(end: RunEnd, entries: NewLogEntry[], alongside?: AttemptChange): Ending {
      const at = new Date();
      return {
        by: 'run',
        status: end.status,
        message: end.message,
        at,
        logs: [
          ...entries,
          {
            executionId,
            taskExecutionId: null,
            dedupeKey: end.log.key,
            level: end.log.level,
            message: end.log.message,
            exception: null,
            timeStamp: at,
          },
        ],
        ...(run !== undefined ? { run } : {}),
        ...(alongside ? { alongside } : {}),
      };
    }

    /**
     * Records the run's end the workflow gave (`endsRun`), once the task's outcome is stored;
     * false when there is none or it could not be written: the run then writes it itself, and
     * the plugin, which has run, is not run again for it.
     */
    async function recordedEnd(): Promise<boolean> {
      if (input.endsRun === undefined) return false;
      try {
        await finishExecution(deps, executionId, runEnd(input.endsRun, []));
        return true;
      } catch (error) {
        deps.logger.warn(
          { executionId, err: error },
          'The run end could not be recorded with its last task; the run records it instead',
        );
        return false;
      }
    }
  }

  // Heartbeats cover the whole attempt, database waits included, so a busy database never
  // passes for a dead worker. A local attempt (a quick plugin's) has no one to heartbeat to:
  // the SDK would pass each beat to the worker's core, which knows no such activity and warns.
  // Each attempt is counted and timed by its plugin, outcome and project
  // (`trellis_task_attempts_total`).
  return async function runTaskAttemptWithHeartbeats(input: AttemptInput): Promise<AttemptResult> {
    const context = Context.current();
    const started = process.hrtime.bigint();
    const attemptOf: { plugin: string; projectId?: string } = { plugin: 'none' };
    const heartbeat = context.info.isLocal
      ? undefined
      : setInterval(() => context.heartbeat(), HEARTBEAT_INTERVAL_MS);
    let outcome: string = 'Interrupted';
    try {
      const result = await runTaskAttempt(input, attemptOf);
      outcome = result.status;
      return result;
    } catch (error) {
      outcome = attemptOutcome(error);
      throw error;
    } finally {
      clearInterval(heartbeat);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.taskAttempt(attemptOf.projectId, attemptOf.plugin, outcome, seconds);
    }
  };
}

/**
 * What came of an attempt that threw: the outcome it recorded (`TaskFailed`), Canceled, or
 * Interrupted (not the task's doing: Temporal runs the same attempt again).
 */
function attemptOutcome(error: unknown): string {
  if (error instanceof CancelledFailure) return 'Canceled';
  if (error instanceof ApplicationFailure && error.type === taskFailedType) {
    const [details] = error.details as [TaskFailedDetails | undefined];
    if (details) return details.outcome;
  }
  return 'Interrupted';
}

/**
 * The W3C trace context of the plugin call's span, which the plugin carries on (`Net/Http` sends
 * it as `traceparent`).
 */
function traceContextOf(span: Span): { trace: PluginTraceContext } | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(otelContext.active(), span), carrier);
  const { traceparent, tracestate } = carrier;
  if (traceparent === undefined) return undefined;
  return { trace: { traceparent, ...(tracestate ? { tracestate } : {}) } };
}

function endPluginSpan(span: Span, failure: Failure | undefined): void {
  if (failure) span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
  span.end();
}

/**
 * Most tasks finish quickly: their outcome write carries the start time, and only a task still
 * running after a moment gets a Running write of its own (half the writes of a quick task).
 */
class RunningMark {
  startedAt: Date | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private written: Promise<void> | undefined;

  constructor(private readonly delayMilliseconds = RUNNING_MARK_DELAY_MS) {}

  /** The attempt started now; `write` marks it Running if it is still going after a moment. */
  start(write: (at: Date) => Promise<void>): Date {
    const at = new Date();
    this.startedAt = at;
    this.timer = setTimeout(() => {
      this.written = write(at);
      this.written.catch(() => {}); // awaited, and so reported, by `settle`
    }, this.delayMilliseconds);
    return at;
  }

  /** No Running write from now on; one already sent has landed when this resolves. */
  async settle(): Promise<void> {
    this.cancel();
    await this.written;
  }

  cancel(): void {
    clearTimeout(this.timer);
  }
}

function describeInterruption(context: Context): string {
  const details = context.cancellationDetails;
  if (details?.workerShutdown) return 'the worker is shutting down';
  if (details?.timedOut) return 'the attempt timed out in Temporal';
  if (details?.notFound) return 'Temporal no longer knows the attempt';
  return 'the attempt was stopped';
}

function rejectWhenAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    else signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });
}

function isExpressionError(error: unknown): error is Error {
  return error instanceof Error && error.name === 'ExpressionError';
}

function isNonRetryable(error: unknown): boolean {
  return (error as { nonRetryable?: unknown } | null)?.nonRetryable === true;
}

function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/**
 * What the task log shows of a failure besides its message: the plugin's own error and frames,
 * as the runner rendered it (never Trellis's stack: it would show the server's paths).
 */
function exceptionOf(error: unknown): { exception?: string } {
  const exception = (error as { exception?: unknown } | null)?.exception;
  return typeof exception === 'string' ? { exception } : {};
}
