/**
 * Decide: an approval is approved or rejected, from the API, an approval link, or (through the
 * same update) the Temporal UI. The run takes each decision; this checks it first.
 */
import type { Kysely } from 'kysely';
import { clientOf, type TemporalClient } from '#platform/temporal/connection.js';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import * as approvalRepository from '#store/approval-repository.js';
import type { ApprovalRow, Database, WorkflowExecutionRow } from '#store/tables.js';
import { resolveInputs } from '#definition/inputs.js';
import { Conflict, Forbidden, Invalid, NotFound, Unavailable } from '#definition/errors.js';
import { problemAt } from '#definition/validation/problem.js';
import {
  approveSignal,
  approveUpdate,
  decisionRefusals,
  rejectSignal,
  rejectUpdate,
  type DecisionExtras,
} from '#protocol/messages.js';
import { assertActive, signalRun } from '../executions/active-run.js';
import { decisionRefusal, type Decider } from './approvers.js';

export interface DecideDeps {
  db: Kysely<Database>;
  temporal: TemporalClient;
}

/** What a decision carries besides yes or no, and who decides it. */
export interface DecisionRequest {
  decidedBy: string;
  reason?: string | undefined;
  /** The values given with an approval, as the request gave them (validated here). */
  inputs?: Record<string, unknown> | undefined;
  /** Where the request carries `inputs`, for messages. */
  inputsAt?: readonly string[];
  /** The user deciding, checked against the approval's approvers; none for an approval link. */
  user?: Decider;
  /** An approval link's notification event. */
  link?: string;
}

/**
 * The checks of a decision before it reaches the run: the caller is one of the approvers (403
 * naming who may), and an approval's inputs are the declared ones (400 naming each problem).
 * Nothing is decided when one fails. Returns the values to record, defaults filled in.
 */
export function checkDecision(
  approval: Pick<ApprovalRow, 'id' | 'taskName' | 'approvers' | 'form'>,
  execution: Pick<WorkflowExecutionRow, 'startedBy'>,
  decision: approvalRepository.Decision,
  request: DecisionRequest,
): Record<string, unknown> | undefined {
  if (request.user) {
    const refusal = decisionRefusal(approval, request.user, execution.startedBy);
    if (refusal !== null) throw new Forbidden(refusal, { code: 'auth.forbidden' });
  }
  const at = request.inputsAt ?? ['body', 'inputs'];
  if (decision === 'Rejected') {
    if (request.inputs !== undefined && Object.keys(request.inputs).length > 0) {
      throw new Invalid(problemAt(at.join('.'), 'only an approval takes inputs, not a rejection'));
    }
    return undefined;
  }
  if (!approval.form && request.inputs === undefined) return undefined;
  const resolved = resolveInputs({ inputs: approval.form ?? {} }, request.inputs, at, 'approval');
  if (!resolved.ok) throw new Invalid(resolved.problems);
  return resolved.inputs;
}

/**
 * Decides an approval (docs/ARCHITECTURE.md#approvals): sends the decision to the run as an update,
 * the same path a decision sent from the Temporal UI or CLI takes, and answers once the run has
 * recorded it. The run is the one place decisions are taken, so each approval is decided exactly
 * once, whoever sends what. Runs started before decisions were updates have no handler for it:
 * for them the decision is recorded here first and then signaled, as it was then.
 *
 * For the API's decisions and approval links alike.
 */
export async function decideApproval(
  deps: DecideDeps,
  execution: WorkflowExecutionRow,
  approvalId: string,
  decision: approvalRepository.Decision,
  request: DecisionRequest,
): Promise<{ id: string; taskName: string }> {
  const { decidedBy, reason } = request;
  // Say what the client most needs: unknown approval, no longer pending, or the run is over.
  const approval = await pendingApproval(deps, execution.id, approvalId);
  const inputs = checkDecision(approval, execution, decision, request);
  assertActive(execution, decision === 'Approved' ? 'be approved' : 'be rejected');
  const client = clientOf(deps.temporal, execution.temporalNamespace);
  const trimmed = reason?.trim();
  const extras: DecisionExtras = {
    via: request.link !== undefined ? 'Link' : 'Api',
    ...(inputs !== undefined ? { inputs } : {}),
    ...(request.link !== undefined ? { notification: request.link } : {}),
  };
  const update = {
    approvalId: approval.id,
    decidedBy,
    ...(trimmed ? { reason: trimmed } : {}),
    ...extras,
  };
  let decided;
  try {
    decided = await client.withDeadline(Date.now() + decisionDeadlineMs, () =>
      client.workflow
        .getHandle(execution.temporalWorkflowId)
        .executeUpdate(decision === 'Approved' ? approveUpdate : rejectUpdate, { args: [update] }),
    );
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw notRunning(execution.id);
    if (!(error instanceof WorkflowUpdateFailedError)) {
      throw new Unavailable(
        `Temporal did not confirm the decision (${(error as Error).message}); the run records it only once it has it: list the approvals to see whether it did.`,
        { code: 'temporal.unavailable' },
      );
    }
    if (isMissingUpdateHandler(error)) {
      return decideBySignal(deps, execution, approval.id, decision, decidedBy, reason, extras);
    }
    throw await refused(deps, execution.id, approval.id, error.cause);
  }
  return { id: decided.approvalId, taskName: decided.taskName };
}

/**
 * The run has no handler for the update: it started before decisions were updates. The SDK
 * rejects such an update at once, with this message (UPGRADING.md).
 */
export function isMissingUpdateHandler(error: unknown): boolean {
  const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
  return (
    cause instanceof ApplicationFailure &&
    cause.message.startsWith('No registered handler for update')
  );
}

/** How long a decision waits for the run to record it. */
const decisionDeadlineMs = 10_000;

/** The approval, still Pending; 404 when it is not the execution's, 409 once decided. */
async function pendingApproval(deps: DecideDeps, executionId: string, approvalId: string) {
  const approval = await approvalRepository.findApproval(deps.db, executionId, approvalId);
  if (!approval) {
    throw new NotFound(`Approval ${approvalId} was not found in execution ${executionId}.`, {
      code: 'approval.not_found',
    });
  }
  if (approval.status !== 'Pending') throw approvalRepository.notPending(approval);
  return approval;
}

function notRunning(executionId: string) {
  return new Conflict(`Execution "${executionId}" is no longer running.`, {
    code: 'execution.not_running',
  });
}

/** The error of a decision the run refused: what the approval is now, or why the run said no. */
async function refused(
  deps: DecideDeps,
  executionId: string,
  approvalId: string,
  cause: unknown,
): Promise<Error> {
  const now = await approvalRepository.findApproval(deps.db, executionId, approvalId);
  if (now && now.status !== 'Pending') return approvalRepository.notPending(now);
  const message = cause instanceof Error ? cause.message : String(cause);
  const type = cause instanceof ApplicationFailure ? cause.type : undefined;
  switch (type) {
    case decisionRefusals.unknown:
      return new NotFound(message, { code: 'approval.not_found' });
    case decisionRefusals.decided:
      return new Conflict(message, { code: 'approval.already_decided' });
    case decisionRefusals.ending:
      return new Conflict(message, { code: 'execution.not_running' });
    default:
      return new Conflict(`The run refused the decision: ${message}`, {
        code: 'approval.refused',
      });
  }
}

/**
 * A run from before decisions were updates: records the decision exactly once, then tells the
 * run; undone if the run cannot hear it. The run acts on the decision recorded here.
 */
async function decideBySignal(
  deps: DecideDeps,
  execution: WorkflowExecutionRow,
  approvalId: string,
  decision: approvalRepository.Decision,
  decidedBy: string,
  reason: string | undefined,
  extras: DecisionExtras,
): Promise<ApprovalRow> {
  const approval = await approvalRepository.decideApproval(deps.db, {
    executionId: execution.id,
    approvalId,
    decision,
    decidedBy,
    reason,
    ...extras,
  });
  const signal = {
    approvalId: approval.id,
    decidedBy,
    ...(approval.reason !== null ? { reason: approval.reason } : {}),
  };
  try {
    const sent = await signalRun(
      clientOf(deps.temporal, execution.temporalNamespace),
      execution,
      (handle) => handle.signal(decision === 'Approved' ? approveSignal : rejectSignal, signal),
    );
    if (sent === 'no-run') throw notRunning(execution.id);
  } catch (error) {
    await approvalRepository.undoApprovalDecision(deps.db, approval.id);
    throw error;
  }
  return approval;
}
