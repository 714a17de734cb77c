/**
 * The run's approvals: asking for them, taking decisions (signals, updates, timeouts) and acting
 * on them. Under the `approval-decisions` patch a decision is settled against the database first
 * (the next write claims it, and the decision recorded first counts); runs that asked for their
 * first approval before it act on signals as they arrive.
 */
import { ApplicationFailure, CancellationScope, condition, sleep } from '@temporalio/workflow';
import {
  decisionMessage,
  decisionRefusals,
  type DecisionResult,
  type PendingApproval,
} from '#protocol/messages.js';
import type { SettledDecision } from '../activities/index.js';
import { notWaitingFor, type ApprovalDesk, type Decision } from './message-handlers.js';
import type { RunState } from './run-state.js';

export class Approvals implements ApprovalDesk {
  /** Task name by approval id, once the database gave the id. */
  private readonly approvalTasks = new Map<string, string>();
  /** Decisions passed on to the database, not yet settled there; and those settled. */
  private readonly claimed = new Set<string>();
  private readonly settled = new Map<string, SettledDecision>();
  /** Timers of approvals that time out, by approval id; canceled once one is decided. */
  private readonly approvalTimers = new Map<string, CancellationScope>();
  /** Whether decisions are settled against the database first (set at the first approval). */
  private settlesDecisions: boolean | undefined;
  /** The loop is over: decisions are no longer taken (the run's end cancels what waits). */
  ending = false;

  constructor(private readonly run: RunState) {}

  /** Whether the run has asked for any approval yet. */
  get anyAsked(): boolean {
    return this.approvalTasks.size > 0;
  }

  /** The approvals the run waits for, in the order it asked for them. */
  waitingApprovals(): PendingApproval[] {
    const waiting: PendingApproval[] = [];
    for (const [approvalId, taskName] of this.approvalTasks) {
      const state = this.run.states.get(taskName);
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
    const { run } = this;
    if (this.ending || run.messages.cancelRequested || run.timedOut) {
      return ApplicationFailure.create({
        type: decisionRefusals.ending,
        message: `Execution ${run.executionId} is ending: approvals still Pending are canceled with it.`,
      });
    }
    const taskName = this.approvalTasks.get(approvalId);
    // Asked for in the write under way: the run learns its id when the write returns.
    if (taskName === undefined)
      return run.batch.approvalsInWrite > 0 ? null : notWaitingFor(approvalId);
    const state = run.states.get(taskName);
    const decided = this.settled.get(approvalId);
    if (
      decided ||
      this.claimed.has(approvalId) ||
      run.messages.decisions.has(approvalId) ||
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
    const { messages, batch } = this.run;
    messages.decisions.set(approvalId, decision);
    messages.changed = true;
    await condition(
      () =>
        this.settled.has(approvalId) ||
        // A claim being written when the run ended is settled by that write.
        (this.ending && !this.claimed.has(approvalId)) ||
        (!this.approvalTasks.has(approvalId) && batch.approvalsInWrite === 0),
    );
    const settled = this.settled.get(approvalId);
    const taskName = this.approvalTasks.get(approvalId);
    if (!settled || taskName === undefined) {
      messages.decisions.delete(approvalId);
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

  /** Asks for the approval of tasks the planner found ready: the next write records the asks. */
  request(names: string[]): void {
    for (const name of names) {
      this.run.states.set(name, { status: 'WaitingForApproval' });
      this.run.batch.approval({ taskExecutionId: this.run.task(name).id, taskName: name });
    }
    if (names.length > 0)
      this.settlesDecisions ??= this.run.features.version.has('approvalDecisions');
  }

  /** The write recorded the ask of `taskName`'s approval as `approvalId`. */
  recordedAsk(approvalId: string, taskName: string): void {
    this.approvalTasks.set(approvalId, taskName);
    this.armTimeout(approvalId, taskName);
  }

  /**
   * Acts on approvals and rejections whose approval this run asked for: settled against the
   * database first (the next write), or, for runs from before that, at once.
   */
  applyDecisions(): void {
    const { messages, states, batch } = this.run;
    for (const [approvalId, decision] of messages.decisions) {
      const name = this.approvalTasks.get(approvalId);
      if (name === undefined) continue; // not asked for yet, or not ours: keep it for later
      messages.decisions.delete(approvalId);
      const state = states.get(name);
      if (state?.status !== 'WaitingForApproval' || state.approved) continue;
      const id = this.run.task(name).id;
      if (this.settlesDecisions) {
        this.claimed.add(approvalId);
        batch.decision({
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
        states.set(name, { status: 'WaitingForApproval', approved: true });
        batch.log(id, 'Info', message);
      } else {
        states.set(name, { status: 'Failed' });
        batch.task({ id, status: 'Failed', message });
        batch.log(id, 'Error', message);
      }
    }
  }

  /** Acts on the decisions the last write settled: the ones the database holds. */
  actOnSettled(decisions: SettledDecision[]): void {
    const { messages, states } = this.run;
    for (const decision of decisions) {
      const { approvalId, status } = decision;
      this.claimed.delete(approvalId);
      if (status === 'Approved' || status === 'Rejected') this.settled.set(approvalId, decision);
      const name = this.approvalTasks.get(approvalId);
      const state = name === undefined ? undefined : states.get(name);
      if (name === undefined || state?.status !== 'WaitingForApproval' || state.approved) continue;
      // Pending cannot be (the claim was recorded); Canceled: the run is ending anyway.
      if (status !== 'Approved' && status !== 'Rejected') continue;
      states.set(
        name,
        status === 'Approved'
          ? { status: 'WaitingForApproval', approved: true }
          : { status: 'Failed' },
      );
      this.approvalTimers.get(approvalId)?.cancel();
      messages.changed = true;
    }
  }

  /** Decisions not yet settled no longer count: the run's end cancels the approvals still Pending. */
  dropClaims(): void {
    for (const claim of this.run.batch.dropDecisions()) this.claimed.delete(claim.approvalId);
  }

  /** Starts the timer of an approval that times out: then its default decision is claimed. */
  private armTimeout(approvalId: string, name: string): void {
    const timeout = this.run.task(name).approvalTimeout;
    if (!timeout || !this.settlesDecisions || this.approvalTimers.has(approvalId)) return;
    const scope = new CancellationScope({ cancellable: true, parent: this.run.taskScope });
    this.approvalTimers.set(approvalId, scope);
    scope
      .run(() =>
        sleep(timeout.milliseconds, {
          summary: `Task ${name}: approval ${approvalId} times out (${timeout.onTimeout})`,
        }),
      )
      .then(
        () => {
          this.run.messages.decisions.set(approvalId, {
            approved: timeout.onTimeout === 'Approve',
            decidedBy: 'system',
            reason: `Timed out: no decision within ${timeout.milliseconds} ms (manualApproval.onTimeout: ${timeout.onTimeout}).`,
            source: 'timeout',
          });
          this.run.messages.changed = true;
        },
        () => {}, // canceled: decided, or the run ended
      );
  }
}
