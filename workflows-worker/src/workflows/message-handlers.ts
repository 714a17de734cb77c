/**
 * The run's signal, update and query handlers, installed before the first await so that nothing
 * sent early is lost. Signal handlers only record what arrived; the run's loop acts on it.
 * Decision updates (runs under the `temporal-ui` patch) wait until the run has recorded them.
 */
import { ApplicationFailure, setHandler } from '@temporalio/workflow';
import {
  approveSignal,
  approveUpdate,
  cancelSignal,
  decisionExtras,
  decisionRefusals,
  pendingApprovalsQuery,
  rejectSignal,
  rejectUpdate,
  stateQuery,
  type DecisionExtras,
  type DecisionResult,
  type DecisionSignal,
  type DecisionUpdate,
  type ExecutionState,
  type PendingApproval,
} from '#protocol/messages.js';

/** A decision on an approval, as it reached the run. */
export interface Decision {
  approved: boolean;
  decidedBy: string;
  reason?: string;
  /** An update (the API's or Temporal's), a signal (likewise), or the approval's timeout. */
  source: 'update' | 'signal' | 'timeout';
  /** An update's inputs and channel, passed on to the record as they came. */
  extras?: DecisionExtras;
}

/** What the decision updates ask of the run, once it exists. */
export interface ApprovalDesk {
  /** Why a decision on `approvalId` cannot be taken now, or null when it can. */
  refusal(approvalId: string): ApplicationFailure | null;
  /** The decision recorded once `decision` has been settled against the database. */
  settle(approvalId: string, decision: Decision): Promise<DecisionResult>;
  waitingApprovals(): PendingApproval[];
}

/** Who decides an approval whose signal or update came from Temporal directly, without a name. */
const unnamedDecider = 'temporal';

/** The longest `decidedBy` an update may name (a person's or a system's name). */
const MAX_DECIDER_LENGTH = 200;

/** What the run's messages brought, and the handlers that record it. */
export class MessageHandlers {
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

/** The refusal of a decision on an approval the run does not wait for. */
export function notWaitingFor(approvalId: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: decisionRefusals.unknown,
    message: `Approval ${approvalId} is not one this execution waits for.`,
  });
}
