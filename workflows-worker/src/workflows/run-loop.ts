/**
 * One run of a definition: the state of every task and the loop that moves them on. Each turn
 * plans (the pure planner), acts (starts tasks, asks for approvals, applies decisions), writes
 * the bookkeeping gathered (progress-batch.ts) and waits for a change: a task's end, a message,
 * a timer.
 */
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  setCurrentDetails,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { ExecutionStatus } from '#protocol/statuses.js';
import type { ErrorHandling } from '#definition/types.js';
import type { ExecutionOutcome } from '#protocol/messages.js';
import { TrellisStatus } from '#protocol/search-attributes.js';
import { Approvals } from './approval-desk.js';
import { bookkeeping } from './bookkeeping.js';
import { failureSources, mergeErrorHandling } from './error-handling.js';
import { LocalAttemptBudget } from './local-attempt-budget.js';
import type { MessageHandlers } from './message-handlers.js';
import { Notifications } from './notifications.js';
import { DagPlanner, isTerminal, type TaskState } from './planner.js';
import { ProgressBatch } from './progress-batch.js';
import type { RunDefinition, RunTask } from '#protocol/run-definition.js';
import type { RunFeatures, RunState } from './run-state.js';
import { runTask } from './run-task.js';
import { statusIs } from './status-attribute.js';
import type { RunEnd } from '../activities/index.js';

/**
 * At most this many tasks run at once, whatever `degreeOfParallelism` says (and when it says
 * nothing): Temporal refuses more than 2,000 pending activities per workflow.
 */
export const maxParallelism = 1000;

export class ExecutionRun implements RunState {
  readonly executionId: string;
  readonly states = new Map<string, TaskState>();
  readonly batch: ProgressBatch;
  readonly parallelism: number;
  readonly localAttempts: LocalAttemptBudget;
  readonly taskScope = new CancellationScope();
  timedOut = false;
  private readonly tasks: Map<string, RunTask>;
  private readonly handling = new Map<string, ErrorHandling>();
  private readonly planner: DagPlanner;
  /** Tasks whose attempts are in flight (their promises settle when the task is done). */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly approvals: Approvals;
  /** What the run's current details (Temporal UI) say now. */
  private details = '';
  private executionStatus: ExecutionStatus = 'Running';
  private readonly notifications: Notifications;
  /** The end the last task's attempt recorded with its outcome (`endsRun`), once it has. */
  private recordedEnd: RunEnd | undefined;
  /** The entry that opens the execution's log, until a write of the run carried it. */
  private openingEntry: string | undefined;

  constructor(
    readonly definition: RunDefinition,
    readonly messages: MessageHandlers,
    readonly features: RunFeatures,
  ) {
    this.executionId = definition.executionId;
    this.openingEntry = features.started;
    this.batch = new ProgressBatch(definition.executionId, features.run);
    this.approvals = new Approvals(this);
    this.notifications = new Notifications(
      definition.executionId,
      definition.notify,
      features.version,
    );
    this.localAttempts = new LocalAttemptBudget(features.version);
    this.tasks = new Map(definition.tasks.map((task) => [task.name, task]));
    const sources = failureSources(definition.tasks, definition.errorHandling);
    this.planner = new DagPlanner(
      definition.tasks.map((task) => ({
        name: task.name,
        dependencies: task.dependencies,
        failureSources: sources.get(task.name) ?? [],
        manualApproval: task.manualApproval,
      })),
    );
    const reuse = definition.tasks.some((task) => task.reused) && features.version.has('rerun');
    for (const task of definition.tasks) {
      this.handling.set(
        task.name,
        mergeErrorHandling(task.errorHandling, definition.errorHandling),
      );
      this.states.set(task.name, { status: reuse && task.reused ? 'Completed' : 'Pending' });
    }
    this.parallelism = Math.min(definition.degreeOfParallelism ?? maxParallelism, maxParallelism);
    messages.state = () => ({
      executionId: this.executionId,
      status: this.executionStatus,
      tasks: Object.fromEntries([...this.states].map(([name, state]) => [name, state.status])),
      ...(this.approvals.anyAsked ? { approvals: this.approvals.waitingApprovals() } : {}),
    });
    messages.desk = this.approvals;
  }

  async execute(): Promise<ExecutionOutcome> {
    if (this.features.ui) this.showStatus('Running');
    const timeout = this.definition.timeoutMilliseconds;
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
      this.messages.cancelRequested = true;
    }
    this.approvals.ending = true;
    return CancellationScope.nonCancellable(async () => {
      timerScope.cancel();
      let outcome = finished ?? (await this.stop());
      // The last task's attempt recorded the end (even if a cancel or the timeout came after it).
      const recorded = this.recordedEnd;
      if (recorded) {
        outcome = { status: recorded.status, message: recorded.message };
      } else {
        if (
          outcome.status === 'Completed' &&
          this.definition.outputs &&
          this.features.version.has('outputs')
        ) {
          const { run } = this.features;
          const evaluated = await bookkeeping('Evaluate the outputs').evaluateOutputs({
            executionId: this.executionId,
            ...(run !== undefined ? { run } : {}),
          });
          if (!evaluated.ok) outcome = { status: 'Failed', message: evaluated.message };
        }
        const { level, message } = endEntry(outcome);
        this.batch.log(null, level, message);
        this.batch.execution(outcome);
      }
      this.executionStatus = outcome.status;
      this.approvals.ending = true;
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

  task(name: string): RunTask {
    const task = this.tasks.get(name);
    if (!task) throw ApplicationFailure.nonRetryable(`Unknown task '${name}'`);
    return task;
  }

  /** Plans, acts, writes, waits for a change; until the planner says the run is over. */
  private async loop(): Promise<{ status: 'Completed' | 'Failed'; message: string } | null> {
    const { messages } = this;
    for (;;) {
      if (messages.cancelRequested || this.timedOut) return null;
      messages.changed = false;
      this.approvals.applyDecisions();
      const plan = this.planner.plan(this.states, this.parallelism);
      for (const { name, reason } of plan.skip) {
        this.states.set(name, { status: 'Skipped', skipCause: 'upstream' });
        this.batch.task({ id: this.task(name).id, status: 'Skipped', message: reason });
        this.batch.log(this.task(name).id, 'Info', reason);
      }
      this.approvals.request(plan.requestApproval);
      // A regular attempt starts once this workflow task completes, so after the write below; a
      // local one would start at once. Quick tasks start after the write, so that what led to
      // them (an approval, say) is logged before their own entries, as for any task.
      const quick = plan.start.filter((name) => this.task(name).quick);
      for (const name of plan.start) if (!this.task(name).quick) this.start(name);
      if (plan.finished) return plan.finished;
      const status = plan.paused ? 'Paused' : 'Running';
      if (status !== this.executionStatus) {
        this.executionStatus = status;
        this.batch.execution({ status });
        this.batch.log(null, 'Info', plan.paused ? 'Paused: waiting for an approval.' : 'Resumed.');
        if (this.features.ui) this.showStatus(status);
      }
      await this.flush();
      // After a cancel or the timeout during the write they stay Pending: `stop` cancels them.
      if (!messages.cancelRequested && !this.timedOut) {
        for (const name of quick) this.start(name);
      }
      await condition(() => messages.changed || messages.cancelRequested || this.timedOut);
    }
  }

  endRecorded(end: RunEnd): void {
    this.recordedEnd = end;
  }

  get unwrittenStart(): string | undefined {
    return this.openingEntry;
  }

  startWritten(): void {
    this.openingEntry = undefined;
  }

  private start(name: string): void {
    const approved = this.states.get(name)?.approved === true;
    const endsRun = this.endIfCompletes(name);
    this.states.set(name, { status: 'Running' });
    const done = this.taskScope.run(() =>
      runTask(
        this,
        this.task(name),
        this.handling.get(name) ?? { strategy: 'Abort' },
        !approved,
        endsRun,
      ),
    );
    const tracked = done.finally(() => {
      this.inFlight.delete(tracked);
      this.messages.changed = true;
    });
    this.inFlight.add(tracked);
  }

  /**
   * How the run ends if `name`, about to start, completes: known when every other task has
   * finished, so that its attempt records the end with the task's outcome (`endsRun`). None for
   * a task that runs children (a subworkflow, forEach items) or a run that evaluates declared
   * outputs before it ends: their ends take more than a write.
   */
  private endIfCompletes(name: string): RunEnd | undefined {
    const task = this.task(name);
    if (task.subworkflow || task.forEach || this.definition.outputs !== undefined) return undefined;
    if (this.inFlight.size > 0) return undefined;
    // From the last: a task still to come is most often downstream, so a long run stops early.
    const { tasks } = this.definition;
    for (let index = tasks.length - 1; index >= 0; index--) {
      const other = tasks[index]!.name;
      if (other !== name && !isTerminal(this.states.get(other)?.status ?? 'Pending')) {
        return undefined;
      }
    }
    const view = new Map(this.states).set(name, { status: 'Completed' });
    const finished = this.planner.plan(view, this.parallelism).finished;
    if (finished === null) return undefined;
    return { ...finished, log: { ...endEntry(finished), key: this.batch.endKey() } };
  }

  /**
   * Ends a canceled or timed-out run: cancels the tasks' activities and timers, waits until
   * every plugin has stopped, then marks every unfinished task Canceled.
   */
  private async stop(): Promise<{ status: 'Failed' | 'Canceled'; message: string }> {
    const { cancelRequested, cancelRequestedBy } = this.messages;
    const timedOut = !cancelRequested && this.timedOut;
    const outcome = timedOut
      ? {
          status: 'Failed' as const,
          message: `Timed out after ${this.definition.timeoutMilliseconds} ms.`,
        }
      : {
          status: 'Canceled' as const,
          message: `Canceled${cancelRequestedBy ? ` by ${cancelRequestedBy}` : ''}.`,
        };
    this.approvals.dropClaims();
    this.batch.log(
      null,
      'Warning',
      timedOut
        ? outcome.message
        : `Cancel requested${cancelRequestedBy ? ` by ${cancelRequestedBy}` : ''}.`,
    );
    this.taskScope.cancel();
    await Promise.allSettled([...this.inFlight]);
    const message = timedOut
      ? 'Canceled: the execution timed out.'
      : 'Canceled: the execution was canceled.';
    for (const [name, state] of this.states) {
      if (isTerminal(state.status)) continue;
      this.states.set(name, { status: 'Canceled' });
      this.batch.task({ id: this.task(name).id, status: 'Canceled', message });
      this.batch.log(this.task(name).id, 'Warning', message);
    }
    return outcome;
  }

  /**
   * Writes the bookkeeping gathered since the last write, and learns the approvals' ids. The
   * log's opening entry goes first in a write that happens anyway; it is never a write alone.
   */
  private async flush(): Promise<void> {
    const opening = this.openingEntry;
    if (opening !== undefined && !this.batch.empty) this.batch.opening(opening);
    const result = await this.batch.write();
    if (!result) return;
    if (opening !== undefined) this.startWritten();
    for (const approval of result.approvals) {
      if ('approvalId' in approval) {
        this.approvals.recordedAsk(approval.approvalId, approval.taskName);
        this.notifications.send('ApprovalRequested', approval.approvalId);
      } else {
        this.states.set(
          approval.taskName,
          approval.status === 'Skipped'
            ? { status: 'Skipped', skipCause: 'condition' }
            : { status: 'Failed' },
        );
      }
      this.messages.changed = true;
    }
    this.approvals.actOnSettled(result.decisions ?? []);
    if (this.features.ui) this.showDetails();
  }

  /** Keeps `TrellisStatus` (and the run's current details) in step with the status. */
  private showStatus(status: ExecutionStatus): void {
    // A clean run's attribute says `Running` from its start: it upserts only a change.
    const shown = this.features.version.startedClean && statusIs(status);
    if (this.features.statusAttribute && !shown) {
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
      const waiting = this.approvals.waitingApprovals();
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
}

/** The log entry of a run's end. */
function endEntry(outcome: { status: ExecutionStatus; message: string }): {
  level: 'Info' | 'Error';
  message: string;
} {
  return {
    level: outcome.status === 'Completed' ? 'Info' : 'Error',
    message: `Execution ${outcome.status.toLowerCase()}: ${outcome.message}`,
  };
}
