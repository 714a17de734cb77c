/**
 * `trellisExecution`: one Temporal workflow per Trellis execution, interpreting the DAG
 * (DESIGN.md §7). Deterministic: the graph decisions come from the pure planner, time from
 * Temporal timers, randomness (backoff jitter) from the workflow's seeded `Math.random`; all I/O
 * happens in activities, imported here only as types.
 *
 * History stays small: one activity per task attempt (it records the task's status and logs
 * itself; a local one, a marker, when the task's plugin is quick), one local activity per batch
 * of engine bookkeeping, and no data in payloads — task outputs live in PostgreSQL and the
 * activities resolve expressions against them.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  type LocalActivityOptions,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { ExecutionStatus } from '../../../core/src/db/tables.js';
import type { ErrorHandling } from '../../../core/src/definition/types.js';
import {
  approveSignal,
  canceledWhileRunning,
  cancelSignal,
  decisionMessage,
  rejectSignal,
  stateQuery,
  type DecisionSignal,
  type ExecutionInput,
  type ExecutionOutcome,
  type ExecutionState,
} from '../../../core/src/temporal/messages.js';
import { TrellisExecutionId } from '../../../core/src/temporal/search-attributes.js';
import type {
  AttemptInput,
  EngineLog,
  ProgressInput,
  SettledDecision,
  TaskFailedDetails,
  TrellisActivities,
} from '../activities/index.js';
import { failurePlan, failureSources, mergeErrorHandling } from './error-handling.js';
import { DagPlanner, isTerminal, type TaskState } from './planner.js';
import type { RunDefinition, RunTask } from './run-definition.js';

/**
 * At most this many tasks run at once, whatever `degreeOfParallelism` says (and when it says
 * nothing): Temporal refuses more than 2,000 pending activities per workflow.
 */
export const maxParallelism = 1000;

/**
 * The patch that evaluates a definition's `outputs` before a completed run records its end
 * (runs that declare none, and runs from before it, end as before).
 */
export const outputsPatch = 'evaluate-outputs';

/** The patch that starts a rerun's reused tasks out Completed (runs without any, as before). */
export const rerunPatch = 'rerun-reused-tasks';

/**
 * The patch under which a run settles each decision that reaches it (a signal, an approval's
 * timeout) against the database before acting on it, so that it acts on the decision recorded
 * first, and times approvals out. Runs that asked for their first approval before it act on
 * signals as they arrive, as before.
 */
export const approvalDecisionsPatch = 'approval-decisions';

/** Who decides an approval whose signal came from Temporal directly, without a name. */
const unnamedDecider = 'temporal';

/** How long a worker may go silent before its attempt is re-run elsewhere. */
const HEARTBEAT_TIMEOUT = '5 seconds';

/**
 * Bookkeeping: short, idempotent database writes, run in the worker that runs the workflow.
 * Retried by Temporal until the database answers.
 */
const bookkeeping = proxyLocalActivities<TrellisActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

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
function attemptActivities(task: RunTask, workflowTimeout: number | undefined) {
  const limit = task.timeoutMilliseconds ?? workflowTimeout;
  const options = {
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

/** The workflow: prepare, then interpret the DAG until it finishes, is canceled or times out. */
export async function trellisExecution(input: ExecutionInput): Promise<ExecutionOutcome> {
  const signals = new Signals();
  const prepared = await bookkeeping.prepareExecution(input);
  const executionId = prepared.ok ? prepared.run.executionId : prepared.executionId;
  if ('scheduled' in input)
    upsertSearchAttributes([{ key: TrellisExecutionId, value: executionId }]);
  if (!prepared.ok) {
    signals.state = () => ({ executionId, status: 'Failed', tasks: {} });
    return { executionId, status: 'Failed', message: prepared.message };
  }
  return new ExecutionRun(prepared.run, signals).execute();
}

interface Decision {
  approved: boolean;
  decidedBy: string;
  reason?: string;
  /** A signal (the API's or Temporal's), or the approval's timeout. */
  source: 'signal' | 'timeout';
}

/**
 * The signal and query handlers, installed before the first await so nothing sent early is
 * lost. Handlers only record what arrived; the run's loop acts on it.
 */
class Signals {
  cancelRequested = false;
  cancelRequestedBy: string | undefined;
  readonly decisions = new Map<string, Decision>();
  /** Set by anything that may let the run move on; the loop waits for it. */
  changed = false;
  /** What the `state` query answers. */
  state: () => ExecutionState = () => ({ executionId: null, status: 'Pending', tasks: {} });

  constructor() {
    setHandler(cancelSignal, (payload) => {
      this.cancelRequested = true;
      this.cancelRequestedBy = payload?.requestedBy;
      this.changed = true;
    });
    setHandler(approveSignal, (payload) => this.decide(payload, true));
    setHandler(rejectSignal, (payload) => this.decide(payload, false));
    setHandler(stateQuery, () => this.state());
  }

  /** A decision signal; one sent by hand (Temporal UI or CLI) may carry anything, or nothing. */
  private decide(payload: DecisionSignal | undefined, approved: boolean): void {
    const { approvalId, decidedBy, reason } = (payload ?? {}) as Partial<Record<string, unknown>>;
    if (typeof approvalId !== 'string') return;
    this.decisions.set(approvalId, {
      approved,
      decidedBy: typeof decidedBy === 'string' ? decidedBy : unnamedDecider,
      ...(typeof reason === 'string' ? { reason } : {}),
      source: 'signal',
    });
    this.changed = true;
  }
}

/** One run of a definition: the state of every task and the loop that moves them on. */
class ExecutionRun {
  private readonly executionId: string;
  private readonly tasks: Map<string, RunTask>;
  private readonly handling = new Map<string, ErrorHandling>();
  private readonly planner: DagPlanner;
  private readonly parallelism: number;
  private readonly states = new Map<string, TaskState>();
  /** Tasks whose attempts are in flight (their promises settle when the task is done). */
  private readonly inFlight = new Set<Promise<void>>();
  /** Activities and backoff timers of tasks: canceled together on cancel or timeout. */
  private readonly taskScope = new CancellationScope();
  private readonly approvalTasks = new Map<string, string>();
  /** Timers of approvals that time out, by approval id; canceled once one is decided. */
  private readonly approvalTimers = new Map<string, CancellationScope>();
  /** Whether decisions are settled against the database first (set at the first approval). */
  private settlesDecisions: boolean | undefined;
  private executionStatus: ExecutionStatus = 'Running';
  private timedOut = false;
  private logCount = 0;
  private pending: Omit<ProgressInput, 'executionId'> = { tasks: [], approvals: [], logs: [] };

  constructor(
    private readonly run: RunDefinition,
    private readonly signals: Signals,
  ) {
    this.executionId = run.executionId;
    this.tasks = new Map(run.tasks.map((task) => [task.name, task]));
    const sources = failureSources(run.tasks, run.errorHandling);
    this.planner = new DagPlanner(
      run.tasks.map((task) => ({
        name: task.name,
        dependencies: task.dependencies,
        failureSources: sources.get(task.name) ?? [],
        manualApproval: task.manualApproval,
      })),
    );
    const reuse = run.tasks.some((task) => task.reused) && patched(rerunPatch);
    for (const task of run.tasks) {
      this.handling.set(task.name, mergeErrorHandling(task.errorHandling, run.errorHandling));
      this.states.set(task.name, { status: reuse && task.reused ? 'Completed' : 'Pending' });
    }
    this.parallelism = Math.min(run.degreeOfParallelism ?? maxParallelism, maxParallelism);
    signals.state = () => ({
      executionId: this.executionId,
      status: this.executionStatus,
      tasks: Object.fromEntries([...this.states].map(([name, state]) => [name, state.status])),
    });
  }

  async execute(): Promise<ExecutionOutcome> {
    const timeout = this.run.timeoutMilliseconds;
    const timerScope = new CancellationScope();
    if (timeout !== undefined) {
      timerScope
        .run(() => sleep(timeout))
        .then(
          () => {
            this.timedOut = true;
          },
          () => {},
        );
    }
    let finished: { status: 'Completed' | 'Failed'; message: string } | null = null;
    try {
      finished = await this.loop();
    } catch (error) {
      // A Temporal-level cancel (e.g. from the Temporal UI) is handled like the cancel signal.
      if (!isCancellation(error)) throw error;
      this.signals.cancelRequested = true;
    }
    return CancellationScope.nonCancellable(async () => {
      timerScope.cancel();
      let outcome = finished ?? (await this.stop());
      if (outcome.status === 'Completed' && this.run.outputs && patched(outputsPatch)) {
        const evaluated = await bookkeeping.evaluateOutputs({ executionId: this.executionId });
        if (!evaluated.ok) outcome = { status: 'Failed', message: evaluated.message };
      }
      const level = outcome.status === 'Completed' ? 'Info' : 'Error';
      this.log(null, level, `Execution ${outcome.status.toLowerCase()}: ${outcome.message}`);
      this.pending.execution = outcome;
      this.executionStatus = outcome.status;
      await this.flush();
      return { executionId: this.executionId, ...outcome };
    });
  }

  /** Plans, acts, writes, waits for a change; until the planner says the run is over. */
  private async loop(): Promise<{ status: 'Completed' | 'Failed'; message: string } | null> {
    for (;;) {
      if (this.signals.cancelRequested || this.timedOut) return null;
      this.signals.changed = false;
      this.applyDecisions();
      const plan = this.planner.plan(this.states, this.parallelism);
      for (const { name, reason } of plan.skip) {
        this.states.set(name, { status: 'Skipped', skipCause: 'upstream' });
        this.pending.tasks.push({ id: this.task(name).id, status: 'Skipped', message: reason });
        this.log(this.task(name).id, 'Info', reason);
      }
      for (const name of plan.requestApproval) {
        this.states.set(name, { status: 'WaitingForApproval' });
        this.pending.approvals.push({ taskExecutionId: this.task(name).id, taskName: name });
      }
      if (plan.requestApproval.length > 0)
        this.settlesDecisions ??= patched(approvalDecisionsPatch);
      // A regular attempt starts once this workflow task completes, so after the write below; a
      // local one would start at once. Quick tasks start after the write, so that what led to
      // them (an approval, say) is logged before their own entries, as for any task.
      const quick = plan.start.filter((name) => this.task(name).quick);
      for (const name of plan.start) if (!this.task(name).quick) this.start(name);
      if (plan.finished) return plan.finished;
      const status = plan.paused ? 'Paused' : 'Running';
      if (status !== this.executionStatus) {
        this.executionStatus = status;
        this.pending.execution = { status };
        this.log(null, 'Info', plan.paused ? 'Paused: waiting for an approval.' : 'Resumed.');
      }
      await this.flush();
      // After a cancel or the timeout during the write they stay Pending: `stop` cancels them.
      if (!this.signals.cancelRequested && !this.timedOut) {
        for (const name of quick) this.start(name);
      }
      await condition(() => this.signals.changed || this.signals.cancelRequested || this.timedOut);
    }
  }

  /**
   * Acts on approvals and rejections whose approval this run asked for: settled against the
   * database first (the next write), or, for runs from before that, at once.
   */
  private applyDecisions(): void {
    for (const [approvalId, decision] of this.signals.decisions) {
      const name = this.approvalTasks.get(approvalId);
      if (name === undefined) continue; // not asked for yet, or not ours: keep it for later
      this.signals.decisions.delete(approvalId);
      const state = this.states.get(name);
      if (state?.status !== 'WaitingForApproval' || state.approved) continue;
      const id = this.task(name).id;
      if (this.settlesDecisions) {
        (this.pending.decisions ??= []).push({
          approvalId,
          taskExecutionId: id,
          approved: decision.approved,
          source: decision.source,
          ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
        });
        continue;
      }
      const message = decisionMessage(decision.approved, decision.decidedBy, decision.reason);
      if (decision.approved) {
        this.states.set(name, { status: 'WaitingForApproval', approved: true });
        this.log(id, 'Info', message);
      } else {
        this.states.set(name, { status: 'Failed' });
        this.pending.tasks.push({ id, status: 'Failed', message });
        this.log(id, 'Error', message);
      }
    }
  }

  /** Acts on the decisions the last write settled: the ones the database holds. */
  private actOnSettled(decisions: SettledDecision[]): void {
    for (const { approvalId, status } of decisions) {
      const name = this.approvalTasks.get(approvalId);
      const state = name === undefined ? undefined : this.states.get(name);
      if (name === undefined || state?.status !== 'WaitingForApproval' || state.approved) continue;
      // Pending cannot be (the claim was recorded); Canceled: the run is ending anyway.
      if (status !== 'Approved' && status !== 'Rejected') continue;
      this.states.set(
        name,
        status === 'Approved'
          ? { status: 'WaitingForApproval', approved: true }
          : { status: 'Failed' },
      );
      this.approvalTimers.get(approvalId)?.cancel();
      this.signals.changed = true;
    }
  }

  /** Starts the timer of an approval that times out: then its default decision is claimed. */
  private armApprovalTimeout(approvalId: string, name: string): void {
    const timeout = this.task(name).approvalTimeout;
    if (!timeout || !this.settlesDecisions || this.approvalTimers.has(approvalId)) return;
    const scope = new CancellationScope({ cancellable: true, parent: this.taskScope });
    this.approvalTimers.set(approvalId, scope);
    scope
      .run(() => sleep(timeout.milliseconds))
      .then(
        () => {
          this.signals.decisions.set(approvalId, {
            approved: timeout.onTimeout === 'Approve',
            decidedBy: 'system',
            reason: `Timed out: no decision within ${timeout.milliseconds} ms (manualApproval.onTimeout: ${timeout.onTimeout}).`,
            source: 'timeout',
          });
          this.signals.changed = true;
        },
        () => {}, // canceled: decided, or the run ended
      );
  }

  private start(name: string): void {
    const approved = this.states.get(name)?.approved === true;
    this.states.set(name, { status: 'Running' });
    const done = this.taskScope.run(() => this.runTask(this.task(name), !approved));
    const tracked = done.finally(() => {
      this.inFlight.delete(tracked);
      this.signals.changed = true;
    });
    this.inFlight.add(tracked);
  }

  /** Runs a task's attempts until it completes, is skipped, fails for good or is canceled. */
  private async runTask(task: RunTask, evaluateCondition: boolean): Promise<void> {
    const activities = attemptActivities(task, this.run.timeoutMilliseconds);
    const handling = this.handling.get(task.name) ?? { strategy: 'Abort' };
    for (let attempt = 1; ; attempt++) {
      const onFailure = failurePlan(handling, attempt, Math.random);
      const input: AttemptInput = {
        executionId: this.executionId,
        taskExecutionId: task.id,
        taskName: task.name,
        attempt,
        evaluateCondition: evaluateCondition && attempt === 1,
        onFailure,
        ...(task.timeoutMilliseconds !== undefined
          ? { timeoutMilliseconds: task.timeoutMilliseconds }
          : {}),
      };
      try {
        const result = await activities.runTaskAttempt(input);
        this.states.set(
          task.name,
          result.status === 'Skipped'
            ? { status: 'Skipped', skipCause: 'condition' }
            : { status: 'Completed' },
        );
        return;
      } catch (error) {
        const outcome = taskFailure(error);
        if (outcome === null) {
          if (isCancellation(error) && this.taskScope.consideredCancelled) {
            // An activity that acknowledged the cancel recorded the task Canceled itself, except
            // a local one, which leaves that to the workflow (see runTaskAttempt); `stop`
            // records the others.
            if (error instanceof ActivityFailure) {
              this.states.set(task.name, { status: 'Canceled' });
              if (task.quick) {
                const message = canceledWhileRunning;
                this.pending.tasks.push({ id: task.id, status: 'Canceled', message });
                this.log(task.id, 'Warning', message);
              }
            }
            return;
          }
          // Not expected (Temporal retries infrastructure failures forever); fail the task
          // rather than the whole workflow task.
          const message = `Failed: ${error instanceof Error ? error.message : String(error)}`;
          this.states.set(task.name, { status: 'Failed' });
          this.pending.tasks.push({ id: task.id, status: 'Failed', message });
          this.log(task.id, 'Error', message);
          return;
        }
        if (outcome === 'Retrying' && onFailure.outcome === 'Retrying') {
          this.states.set(task.name, { status: 'Retrying' });
          await sleep(onFailure.delayMilliseconds);
          this.states.set(task.name, { status: 'Running' });
          continue;
        }
        this.states.set(
          task.name,
          outcome === 'Skipped'
            ? { status: 'Skipped', skipCause: 'strategy' }
            : { status: 'Failed' },
        );
        return;
      }
    }
  }

  /**
   * Ends a canceled or timed-out run: cancels the tasks' activities and timers, waits until
   * every plugin has stopped, then marks every unfinished task Canceled.
   */
  private async stop(): Promise<{ status: 'Failed' | 'Canceled'; message: string }> {
    const timedOut = !this.signals.cancelRequested && this.timedOut;
    const outcome = timedOut
      ? {
          status: 'Failed' as const,
          message: `Timed out after ${this.run.timeoutMilliseconds} ms.`,
        }
      : {
          status: 'Canceled' as const,
          message: `Canceled${this.signals.cancelRequestedBy ? ` by ${this.signals.cancelRequestedBy}` : ''}.`,
        };
    // Decisions not yet settled no longer count: the run's end cancels the approvals still Pending.
    delete this.pending.decisions;
    this.log(
      null,
      'Warning',
      timedOut
        ? outcome.message
        : `Cancel requested${this.signals.cancelRequestedBy ? ` by ${this.signals.cancelRequestedBy}` : ''}.`,
    );
    this.taskScope.cancel();
    await Promise.allSettled([...this.inFlight]);
    const message = timedOut
      ? 'Canceled: the execution timed out.'
      : 'Canceled: the execution was canceled.';
    for (const [name, state] of this.states) {
      if (isTerminal(state.status)) continue;
      this.states.set(name, { status: 'Canceled' });
      this.pending.tasks.push({ id: this.task(name).id, status: 'Canceled', message });
      this.log(this.task(name).id, 'Warning', message);
    }
    return outcome;
  }

  /** Writes the bookkeeping gathered since the last write, and learns the approvals' ids. */
  private async flush(): Promise<void> {
    const batch = this.pending;
    if (
      batch.tasks.length === 0 &&
      batch.approvals.length === 0 &&
      (batch.decisions ?? []).length === 0 &&
      batch.logs.length === 0 &&
      batch.execution === undefined
    ) {
      return;
    }
    this.pending = { tasks: [], approvals: [], logs: [] };
    let result;
    try {
      result = await bookkeeping.recordProgress({ executionId: this.executionId, ...batch });
    } catch (error) {
      // Canceled from Temporal mid-write: keep the batch for the final write (writes repeat
      // harmlessly), ahead of anything gathered since.
      const since = this.pending;
      const execution = since.execution ?? batch.execution;
      const decisions = [...(batch.decisions ?? []), ...(since.decisions ?? [])];
      this.pending = {
        tasks: [...batch.tasks, ...since.tasks],
        approvals: [...batch.approvals, ...since.approvals],
        logs: [...batch.logs, ...since.logs],
        ...(decisions.length > 0 ? { decisions } : {}),
        ...(execution ? { execution } : {}),
      };
      throw error;
    }
    for (const approval of result.approvals) {
      if ('approvalId' in approval) {
        this.approvalTasks.set(approval.approvalId, approval.taskName);
        this.armApprovalTimeout(approval.approvalId, approval.taskName);
      } else {
        this.states.set(
          approval.taskName,
          approval.status === 'Skipped'
            ? { status: 'Skipped', skipCause: 'condition' }
            : { status: 'Failed' },
        );
      }
      this.signals.changed = true;
    }
    this.actOnSettled(result.decisions ?? []);
  }

  private log(taskExecutionId: string | null, level: EngineLog['level'], message: string): void {
    this.pending.logs.push({ taskExecutionId, level, message, key: `engine:${this.logCount++}` });
  }

  private task(name: string): RunTask {
    const task = this.tasks.get(name);
    if (!task) throw ApplicationFailure.nonRetryable(`Unknown task '${name}'`);
    return task;
  }
}

/**
 * The outcome a failed attempt recorded, or null when the error is not a task failure. A
 * regular activity's failure arrives wrapped in an ActivityFailure, a local activity's as is.
 */
function taskFailure(error: unknown): TaskFailedDetails['outcome'] | null {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  if (!(failure instanceof ApplicationFailure) || failure.type !== 'TaskFailed') return null;
  const details = failure.details?.[0] as TaskFailedDetails | undefined;
  return details?.outcome ?? 'Failed';
}
