/**
 * `trellisExecution`: one Temporal workflow per Trellis execution, interpreting the DAG
 * (docs/ARCHITECTURE.md#scheduling). Deterministic: decisions come from the pure planner, time from
 * Temporal timers, randomness (backoff jitter) from the workflow's seeded `Math.random`; all I/O
 * happens in activities, imported here only as types.
 *
 * History stays small: one activity per task attempt (it records the task's status and logs
 * itself; a local one, a marker, when the task's plugin is quick), one local activity per batch
 * of engine bookkeeping, and no data in payloads — task outputs live in PostgreSQL and the
 * activities resolve expressions against them.
 *
 * Operators read runs in the Temporal UI in Trellis's words (`temporal-ui` patch): the run ends
 * Completed, Failed or Canceled in Temporal as in Trellis, keeps the `TrellisStatus` search
 * attribute current, names the approvals it waits for in its current details, takes decisions as
 * updates, and each activity's summary names the task and attempt it runs.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  isCancellation,
  type LocalActivityOptions,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ExecutionStatus } from '../../../core/src/db/tables.js';
import type { ErrorHandling } from '../../../core/src/definition/types.js';
import {
  approveSignal,
  approveUpdate,
  canceledWhileRunning,
  cancelSignal,
  decisionExtras,
  decisionMessage,
  decisionRefusals,
  pendingApprovalsQuery,
  rejectSignal,
  rejectUpdate,
  stateQuery,
  type DecisionExtras,
  type DecisionResult,
  type DecisionSignal,
  type DecisionUpdate,
  type ExecutionInput,
  type ExecutionOutcome,
  type ExecutionState,
  type PendingApproval,
} from '../../../core/src/temporal/messages.js';
import { TrellisExecutionId, TrellisStatus } from '../../../core/src/temporal/search-attributes.js';
import type {
  AttemptInput,
  EngineLog,
  ProgressInput,
  SettledDecision,
  TaskFailedDetails,
  TrellisActivities,
} from '../activities/index.js';
import {
  failurePlan,
  failureSources,
  mergeErrorHandling,
  type FailurePlan,
} from './error-handling.js';
import { foreachPatch, runForEach } from './foreach.js';
import { LocalAttemptBudget } from './local-attempt-budget.js';
import { Notifications } from './notifications.js';
import { DagPlanner, isTerminal, type TaskState } from './planner.js';
import type { RunDefinition, RunTask } from './run-definition.js';
import { releasedSlot, waitForSlot } from './concurrency.js';
import { runSubworkflowAttempt, startsSubworkflows } from './subworkflow.js';

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

/**
 * The patch under which a run reads in the Temporal UI as it does in Trellis: it ends Failed (an
 * ApplicationFailure with the Trellis message) or Canceled (a CancelledFailure) in Temporal too,
 * keeps `TrellisStatus` current, and takes approvals' decisions as updates. Set at the run's
 * start: runs started before it keep their behaviour to the end.
 */
export const temporalUiPatch = 'temporal-ui';

/** The `type` of the failure a run that ended Failed fails its Temporal workflow with. */
export const executionFailedType = 'ExecutionFailed';

/**
 * How long a run canceled by the `cancel` signal alone waits, once it has recorded its end, for
 * Temporal's own cancel request (the API sends both; the first names who canceled) before it
 * closes as Completed: only a cancel request lets a workflow close as Canceled.
 */
const CANCEL_REQUEST_WAIT = '10 seconds';

/** Who decides an approval whose signal or update came from Temporal directly, without a name. */
const unnamedDecider = 'temporal';

/** How long a worker may go silent before its attempt is re-run elsewhere. */
const HEARTBEAT_TIMEOUT = '5 seconds';

/**
 * Bookkeeping: short, idempotent database writes, run in the worker that runs the workflow.
 * Retried by Temporal until the database answers.
 */
const bookkeepingOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
} satisfies LocalActivityOptions;

/** The bookkeeping activities, with the summary the Temporal UI shows for the call. */
function bookkeeping(summary: string) {
  return proxyLocalActivities<TrellisActivities>({ ...bookkeepingOptions, summary });
}

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
export function attemptActivities(
  task: RunTask,
  workflowTimeout: number | undefined,
  summary: string,
) {
  const limit = task.timeoutMilliseconds ?? workflowTimeout;
  const options = {
    summary,
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
  const root = CancellationScope.current();
  const ui = patched(temporalUiPatch);
  const run = resetRun();
  const signals = new Signals(ui);
  const prepare = () =>
    bookkeeping('Prepare the execution').prepareExecution(
      run === undefined ? input : { ...input, run },
    );
  // A cancel that arrives while the run prepares (the API's, right after it started the run)
  // lets the preparation finish, so that the run records its end as for any other cancel.
  const again = () => (ui ? CancellationScope.nonCancellable(prepare) : prepare());
  // In line for a concurrency slot: waits until the run has it (or ended).
  const prepared = await waitForSlot(await again(), again, signals);
  const executionId = prepared.ok ? prepared.run.executionId : prepared.executionId;
  const statusAttribute = ui && prepared.statusAttribute === true;
  const scheduled = 'scheduled' in input ? [{ key: TrellisExecutionId, value: executionId }] : [];
  if (!ui && scheduled.length > 0) upsertSearchAttributes(scheduled);
  if (!prepared.ok) {
    signals.state = () => ({ executionId, status: 'Failed', tasks: {} });
    if (!ui) return { executionId, status: 'Failed', message: prepared.message };
    const status = prepared.status ?? 'Failed';
    if (statusAttribute || scheduled.length > 0) {
      upsertSearchAttributes([
        ...scheduled,
        ...(statusAttribute ? [{ key: TrellisStatus, value: status }] : []),
      ]);
    }
    return end({ executionId, status, message: prepared.message }, root, false);
  }
  const outcome = await new ExecutionRun(prepared.run, signals, {
    ui,
    statusAttribute,
    run,
    initialAttributes: scheduled,
  }).execute();
  await releasedSlot(prepared.slot);
  return ui ? end(outcome, root, true) : outcome;
}

/**
 * The run's id when an operator reset it from the Temporal UI or CLI (its first event names the
 * run it was reset from): its activities then take the execution over from that run, and what
 * they log is kept apart from its entries. Undefined for every run that was not reset.
 */
function resetRun(): string | undefined {
  const { runId, originalExecutionRunId } = workflowInfo();
  return runId !== originalExecutionRunId ? runId : undefined;
}

/**
 * Closes the Temporal workflow as the run ended in Trellis, once its end is recorded: Completed
 * returns the outcome, Failed fails it (non-retryable, with the Trellis message), Canceled cancels
 * it (only possible once Temporal was asked to cancel it: the API asks, after its signal).
 */
async function end(
  outcome: ExecutionOutcome,
  root: CancellationScope,
  awaitCancel: boolean,
): Promise<ExecutionOutcome> {
  // Not cancellable: a cancel requested by now is what this waits for, not a reason to stop.
  await CancellationScope.nonCancellable(async () => {
    // Decision updates still waiting answer once the run has ended: let them, first.
    await condition(allHandlersFinished);
    if (outcome.status === 'Canceled' && awaitCancel && !root.consideredCancelled) {
      await condition(() => root.consideredCancelled, CANCEL_REQUEST_WAIT, {
        summary: 'Wait for Temporal to confirm the cancel',
      });
    }
  });
  if (outcome.status === 'Failed') {
    const failure = ApplicationFailure.create({
      type: executionFailedType,
      message: outcome.message,
      nonRetryable: true,
      details: [outcome],
    });
    // The run's outcome, not an error in its code: the workflow's stack would only show Trellis's.
    failure.stack = '';
    throw failure;
  }
  if (outcome.status === 'Canceled' && root.consideredCancelled) {
    throw new CancelledFailure(outcome.message);
  }
  return outcome;
}

interface Decision {
  approved: boolean;
  decidedBy: string;
  reason?: string;
  /** An update (the API's or Temporal's), a signal (likewise), or the approval's timeout. */
  source: 'update' | 'signal' | 'timeout';
  /** An update's inputs and channel, passed on to the record as they came. */
  extras?: DecisionExtras;
}

/** What the decision updates ask of the run, once it exists. */
interface ApprovalDesk {
  /** Why a decision on `approvalId` cannot be taken now, or null when it can. */
  refusal(approvalId: string): ApplicationFailure | null;
  /** The decision recorded once `decision` has been settled against the database. */
  settle(approvalId: string, decision: Decision): Promise<DecisionResult>;
  waitingApprovals(): PendingApproval[];
}

/** The longest `decidedBy` an update may name (a person's or a system's name). */
const MAX_DECIDER_LENGTH = 200;

/**
 * The signal, update and query handlers, installed before the first await so nothing sent early
 * is lost. Signal handlers only record what arrived; the run's loop acts on it. Decision updates
 * (runs under the `temporal-ui` patch) wait until the run has recorded them.
 */
class Signals {
  cancelRequested = false;
  cancelRequestedBy: string | undefined;
  readonly decisions = new Map<string, Decision>();
  /** Set by anything that may let the run move on; the loop waits for it. */
  changed = false;
  /** What the `state` query answers. */
  state: () => ExecutionState = () => ({ executionId: null, status: 'Pending', tasks: {} });
  desk: ApprovalDesk | undefined;

  constructor(updates: boolean) {
    setHandler(cancelSignal, (payload) => {
      this.cancelRequested = true;
      this.cancelRequestedBy = payload?.requestedBy;
      this.changed = true;
    });
    setHandler(approveSignal, (payload) => this.decide(payload, true));
    setHandler(rejectSignal, (payload) => this.decide(payload, false));
    setHandler(stateQuery, () => this.state());
    setHandler(pendingApprovalsQuery, () => this.desk?.waitingApprovals() ?? []);
    if (updates) {
      for (const [update, approved] of [
        [approveUpdate, true],
        [rejectUpdate, false],
      ] as const) {
        setHandler(update, (input: DecisionUpdate) => this.decideByUpdate(input, approved), {
          validator: (input: DecisionUpdate) => this.validate(input),
        });
      }
    }
  }

  /** A decision signal; one sent by hand (Temporal UI or CLI) may carry anything, or nothing. */
  private decide(payload: DecisionSignal | undefined, approved: boolean): void {
    const { approvalId, decidedBy, reason } = (payload ?? {}) as Partial<Record<string, unknown>>;
    if (typeof approvalId !== 'string') return;
    this.decisions.set(approvalId, {
      approved,
      decidedBy: typeof decidedBy === 'string' && decidedBy.trim() ? decidedBy : unnamedDecider,
      ...(typeof reason === 'string' ? { reason } : {}),
      source: 'signal',
    });
    this.changed = true;
  }

  /** Refuses an update that is not a decision on an approval the run waits for (no history). */
  private validate(input: DecisionUpdate): void {
    const problem = decisionProblem(input);
    if (problem)
      throw ApplicationFailure.create({ type: decisionRefusals.invalid, message: problem });
    const refusal = this.desk
      ? this.desk.refusal(input.approvalId)
      : notWaitingFor(input.approvalId);
    if (refusal) throw refusal;
  }

  private async decideByUpdate(input: DecisionUpdate, approved: boolean): Promise<DecisionResult> {
    const desk = this.desk;
    if (!desk) throw notWaitingFor(input.approvalId);
    const decidedBy = input.decidedBy?.trim();
    const reason = input.reason?.trim();
    const extras = decisionExtras(input);
    return desk.settle(input.approvalId, {
      approved,
      decidedBy: decidedBy ? decidedBy : unnamedDecider,
      ...(reason ? { reason } : {}),
      source: 'update',
      ...(Object.keys(extras).length > 0 ? { extras } : {}),
    });
  }
}

/** What is wrong with a decision update's input (one sent by hand may carry anything). */
function decisionProblem(input: unknown): string | null {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return 'The update takes one object: {"approvalId": "…", "decidedBy": "…", "reason": "…"}.';
  }
  const { approvalId, decidedBy, reason } = input as Partial<Record<string, unknown>>;
  if (typeof approvalId !== 'string' || approvalId.trim() === '') {
    return 'approvalId: required, the id of an approval the run waits for.';
  }
  if (decidedBy !== undefined && typeof decidedBy !== 'string') {
    return 'decidedBy: must be a string (who decides).';
  }
  if (typeof decidedBy === 'string' && decidedBy.length > MAX_DECIDER_LENGTH) {
    return `decidedBy: at most ${MAX_DECIDER_LENGTH} characters.`;
  }
  if (reason !== undefined && typeof reason !== 'string') return 'reason: must be a string.';
  return null;
}

function notWaitingFor(approvalId: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: decisionRefusals.unknown,
    message: `Approval ${approvalId} is not one this execution waits for.`,
  });
}

/** The features of a run under the `temporal-ui` patch, and what it was started with. */
interface RunFeatures {
  /** Under the `temporal-ui` patch. */
  ui: boolean;
  /** The run keeps `TrellisStatus` current. */
  statusAttribute: boolean;
  /** The run's id when an operator reset it from Temporal. */
  run: string | undefined;
  /** Search attributes to set with the first status (a scheduled run's execution id). */
  initialAttributes: Array<{ key: typeof TrellisExecutionId; value: string }>;
}

/** One run of a definition: the state of every task and the loop that moves them on. */
class ExecutionRun implements ApprovalDesk {
  private readonly executionId: string;
  private readonly tasks: Map<string, RunTask>;
  private readonly handling = new Map<string, ErrorHandling>();
  private readonly planner: DagPlanner;
  private readonly parallelism: number;
  private readonly states = new Map<string, TaskState>();
  /** Tasks whose attempts are in flight (their promises settle when the task is done). */
  private readonly inFlight = new Set<Promise<void>>();
  /** Quick attempts per workflow task (local-attempt-budget.ts). */
  private readonly localAttempts = new LocalAttemptBudget();
  /** Activities and backoff timers of tasks: canceled together on cancel or timeout. */
  private readonly taskScope = new CancellationScope();
  /** Task name by approval id, once the database gave the id. */
  private readonly approvalTasks = new Map<string, string>();
  /** Approvals asked for in the write under way (their ids are not known yet). */
  private requestingApprovals = 0;
  /** Decisions passed on to the database, not yet settled there; and those settled. */
  private readonly claimed = new Set<string>();
  private readonly settled = new Map<string, SettledDecision>();
  /** The loop is over: decisions are no longer taken (the run's end cancels what waits). */
  private ending = false;
  /** What the run's current details (Temporal UI) say now. */
  private details = '';
  /** Timers of approvals that time out, by approval id; canceled once one is decided. */
  private readonly approvalTimers = new Map<string, CancellationScope>();
  /** Whether decisions are settled against the database first (set at the first approval). */
  private settlesDecisions: boolean | undefined;
  private executionStatus: ExecutionStatus = 'Running';
  private timedOut = false;
  private logCount = 0;
  private pending: Omit<ProgressInput, 'executionId'> = { tasks: [], approvals: [], logs: [] };
  private readonly notifications: Notifications;

  constructor(
    private readonly run: RunDefinition,
    private readonly signals: Signals,
    private readonly features: RunFeatures,
  ) {
    this.executionId = run.executionId;
    this.notifications = new Notifications(run.executionId, run.notify);
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
      ...(this.approvalTasks.size > 0 ? { approvals: this.waitingApprovals() } : {}),
    });
    signals.desk = this;
  }

  /** The approvals the run waits for, in the order it asked for them. */
  waitingApprovals(): PendingApproval[] {
    const waiting: PendingApproval[] = [];
    for (const [approvalId, taskName] of this.approvalTasks) {
      const state = this.states.get(taskName);
      if (
        state?.status === 'WaitingForApproval' &&
        !state.approved &&
        !this.settled.has(approvalId)
      ) {
        waiting.push({ approvalId, taskName });
      }
    }
    return waiting;
  }

  refusal(approvalId: string): ApplicationFailure | null {
    if (this.ending || this.signals.cancelRequested || this.timedOut) {
      return ApplicationFailure.create({
        type: decisionRefusals.ending,
        message: `Execution ${this.executionId} is ending: approvals still Pending are canceled with it.`,
      });
    }
    const taskName = this.approvalTasks.get(approvalId);
    // Asked for in the write under way: the run learns its id when the write returns.
    if (taskName === undefined)
      return this.requestingApprovals > 0 ? null : notWaitingFor(approvalId);
    const state = this.states.get(taskName);
    const decided = this.settled.get(approvalId);
    if (
      decided ||
      this.claimed.has(approvalId) ||
      this.signals.decisions.has(approvalId) ||
      state?.status !== 'WaitingForApproval' ||
      state.approved
    ) {
      return ApplicationFailure.create({
        type: decisionRefusals.decided,
        message: decided?.decidedBy
          ? `Approval ${approvalId} was already ${decided.status.toLowerCase()} by ${decided.decidedBy}.`
          : `Approval ${approvalId} was already decided.`,
      });
    }
    return null;
  }

  async settle(approvalId: string, decision: Decision): Promise<DecisionResult> {
    this.signals.decisions.set(approvalId, decision);
    this.signals.changed = true;
    await condition(
      () =>
        this.settled.has(approvalId) ||
        // A claim being written when the run ended is settled by that write.
        (this.ending && !this.claimed.has(approvalId)) ||
        (!this.approvalTasks.has(approvalId) && this.requestingApprovals === 0),
    );
    const settled = this.settled.get(approvalId);
    const taskName = this.approvalTasks.get(approvalId);
    if (!settled || taskName === undefined) {
      this.signals.decisions.delete(approvalId);
      throw taskName === undefined
        ? notWaitingFor(approvalId)
        : ApplicationFailure.create({
            type: decisionRefusals.ending,
            message: `Approval ${approvalId} was canceled: its execution ended before the decision was recorded.`,
          });
    }
    const wanted = decision.approved ? 'Approved' : 'Rejected';
    if (settled.status !== wanted || settled.decidedBy !== decision.decidedBy) {
      throw ApplicationFailure.create({
        type: decisionRefusals.decided,
        message: `Approval ${approvalId} was already ${settled.status.toLowerCase()}${settled.decidedBy ? ` by ${settled.decidedBy}` : ''}.`,
      });
    }
    return {
      approvalId,
      taskName,
      status: settled.status,
      decidedBy: settled.decidedBy ?? null,
      reason: settled.reason ?? null,
    };
  }

  /** Keeps `TrellisStatus` (and the run's current details) in step with the status. */
  private showStatus(status: ExecutionStatus): void {
    if (this.features.statusAttribute) {
      const initial = this.features.initialAttributes.splice(0);
      upsertSearchAttributes([...initial, { key: TrellisStatus, value: status }]);
    } else if (this.features.initialAttributes.length > 0) {
      upsertSearchAttributes(this.features.initialAttributes.splice(0));
    }
    this.showDetails();
  }

  /**
   * The run's current details in the Temporal UI: while Paused, the tasks and approvals it waits
   * for and how to decide them. Not a command: nothing of it goes into the history.
   */
  private showDetails(): void {
    let details = '';
    if (this.executionStatus === 'Paused') {
      const waiting = this.waitingApprovals();
      details = [
        `**Paused**: waiting for ${waiting.length === 1 ? 'an approval' : `${waiting.length} approvals`} ` +
          '(decide in Trellis, or with the `approve` / `reject` update and `{"approvalId": "…", "decidedBy": "…"}`):',
        '',
        ...waiting.map(
          ({ approvalId, taskName }) => `- task **${taskName}**: approval \`${approvalId}\``,
        ),
      ].join('\n');
    }
    if (details !== this.details) {
      this.details = details;
      setCurrentDetails(details);
    }
  }

  async execute(): Promise<ExecutionOutcome> {
    if (this.features.ui) this.showStatus('Running');
    const timeout = this.run.timeoutMilliseconds;
    const timerScope = new CancellationScope();
    if (timeout !== undefined) {
      timerScope
        .run(() => sleep(timeout, { summary: 'Execution timeout' }))
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
    this.ending = true;
    return CancellationScope.nonCancellable(async () => {
      timerScope.cancel();
      let outcome = finished ?? (await this.stop());
      if (outcome.status === 'Completed' && this.run.outputs && patched(outputsPatch)) {
        const { run } = this.features;
        const evaluated = await bookkeeping('Evaluate the outputs').evaluateOutputs({
          executionId: this.executionId,
          ...(run !== undefined ? { run } : {}),
        });
        if (!evaluated.ok) outcome = { status: 'Failed', message: evaluated.message };
      }
      const level = outcome.status === 'Completed' ? 'Info' : 'Error';
      this.log(null, level, `Execution ${outcome.status.toLowerCase()}: ${outcome.message}`);
      this.pending.execution = outcome;
      this.executionStatus = outcome.status;
      this.ending = true;
      await this.flush();
      if (this.features.ui) this.showStatus(outcome.status);
      if (outcome.status !== 'Canceled') {
        this.notifications.send(
          outcome.status === 'Completed' ? 'ExecutionCompleted' : 'ExecutionFailed',
        );
      }
      await this.notifications.settled();
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
        if (this.features.ui) this.showStatus(status);
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
        this.claimed.add(approvalId);
        (this.pending.decisions ??= []).push({
          approvalId,
          taskExecutionId: id,
          approved: decision.approved,
          source: decision.source,
          ...(decision.source !== 'timeout' ? { decidedBy: decision.decidedBy } : {}),
          ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
          ...decision.extras,
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
    for (const decision of decisions) {
      const { approvalId, status } = decision;
      this.claimed.delete(approvalId);
      if (status === 'Approved' || status === 'Rejected') this.settled.set(approvalId, decision);
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
      .run(() =>
        sleep(timeout.milliseconds, {
          summary: `Task ${name}: approval ${approvalId} times out (${timeout.onTimeout})`,
        }),
      )
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
    const handling = this.handling.get(task.name) ?? { strategy: 'Abort' };
    const { run } = this.features;
    if (task.forEach && patched(foreachPatch)) {
      const state = await runForEach({
        executionId: this.executionId,
        task,
        handling,
        runParallelism: this.parallelism,
        workflowTimeout: this.run.timeoutMilliseconds,
        run,
      });
      if (state) this.states.set(task.name, state);
      return;
    }
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
        ...(run !== undefined ? { run } : {}),
      };
      const activities = attemptActivities(
        task,
        this.run.timeoutMilliseconds,
        attemptSummary(task.name, attempt, onFailure),
      );
      try {
        // Awaits only past the bound (and never in a run from before it): a quick attempt
        // within it starts as it always did.
        let turn = task.quick ? this.localAttempts.reserve() : undefined;
        while (turn) {
          await turn;
          turn = this.localAttempts.reserve();
        }
        const result =
          task.subworkflow && startsSubworkflows()
            ? await runSubworkflowAttempt(input, task.timeoutMilliseconds)
            : await activities.runTaskAttempt(input);
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
          await sleep(onFailure.delayMilliseconds, {
            summary: `Task ${task.name}: back off before attempt ${attempt + 1}`,
          });
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
    for (const claim of this.pending.decisions ?? []) this.claimed.delete(claim.approvalId);
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
    const { run } = this.features;
    let result;
    this.requestingApprovals += batch.approvals.length;
    try {
      result = await bookkeeping(progressSummary(batch)).recordProgress({
        executionId: this.executionId,
        ...(run !== undefined ? { run } : {}),
        ...batch,
      });
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
    } finally {
      this.requestingApprovals -= batch.approvals.length;
    }
    for (const approval of result.approvals) {
      if ('approvalId' in approval) {
        this.approvalTasks.set(approval.approvalId, approval.taskName);
        this.armApprovalTimeout(approval.approvalId, approval.taskName);
        this.notifications.send('ApprovalRequested', approval.approvalId);
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
    if (this.features.ui) this.showDetails();
  }

  private log(taskExecutionId: string | null, level: EngineLog['level'], message: string): void {
    // A reset run's entries are its own: the run before it wrote entries under the same numbers.
    const { run } = this.features;
    const key =
      run === undefined ? `engine:${this.logCount++}` : `engine:${run}:${this.logCount++}`;
    this.pending.logs.push({ taskExecutionId, level, message, key });
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
export function taskFailure(error: unknown): TaskFailedDetails['outcome'] | null {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  if (!(failure instanceof ApplicationFailure) || failure.type !== 'TaskFailed') return null;
  const details = failure.details?.[0] as TaskFailedDetails | undefined;
  return details?.outcome ?? 'Failed';
}

/**
 * What the Temporal UI shows for a task's attempt: the task's name and the attempt (Temporal's
 * own attempt count is the retries of this same attempt after a worker or database failure).
 */
export function attemptSummary(taskName: string, attempt: number, onFailure: FailurePlan): string {
  // A failure of the last attempt the error strategy allows fails the task: that is the total.
  const total =
    onFailure.outcome === 'Retrying' ? onFailure.maxRetries + 1 : attempt > 1 ? attempt : 0;
  return `Task ${taskName}: attempt ${attempt}${total > 1 ? ` of ${total}` : ''}`;
}

/** What the Temporal UI shows for a bookkeeping write: what it records, in a few words. */
function progressSummary(batch: Omit<ProgressInput, 'executionId'>): string {
  const parts: string[] = [];
  if (batch.execution) parts.push(`execution ${batch.execution.status}`);
  const byStatus = new Map<string, string[]>();
  for (const task of batch.tasks) {
    const names = byStatus.get(task.status) ?? [];
    names.push(task.id);
    byStatus.set(task.status, names);
  }
  for (const [status, ids] of byStatus) {
    parts.push(`${ids.length} task${ids.length === 1 ? '' : 's'} ${status}`);
  }
  if (batch.approvals.length > 0) {
    parts.push(
      `ask approval of ${batch.approvals.map((approval) => approval.taskName).join(', ')}`,
    );
  }
  const decisions = batch.decisions ?? [];
  if (decisions.length > 0) {
    parts.push(`${decisions.length} decision${decisions.length === 1 ? '' : 's'}`);
  }
  if (parts.length === 0) parts.push(`${batch.logs.length} log entries`);
  return `Record: ${parts.join('; ')}`;
}
