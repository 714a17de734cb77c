import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import * as approvalRepository from '../../../core/src/db/approval-repository.js';
import type { ApprovalView } from '../../../core/src/db/approval-repository.js';
import type { ApprovalRow, WorkflowExecutionRow } from '../../../core/src/db/tables.js';
import * as workflowRepository from '../../../core/src/db/workflow-repository.js';
import { Conflict, NotFound, Unavailable } from '../../../core/src/errors.js';
import {
  approveSignal,
  approveUpdate,
  decisionRefusals,
  rejectSignal,
  rejectUpdate,
} from '../../../core/src/temporal/messages.js';
import {
  assertActive,
  findExecution,
  iso,
  signalRun,
  temporalClient,
} from '../executions/handlers.js';
import type { AppDeps, HandlerMap } from '../handler.js';
import { confirmation } from '../handler.js';
import { listReply, requestedPage } from '../lists.js';
import { workflowNotFound } from '../workflows/handlers.js';

function toApproval(approval: ApprovalView) {
  return {
    id: approval.id,
    workflowId: approval.workflowId,
    executionId: approval.executionId,
    taskExecutionId: approval.taskExecutionId,
    taskName: approval.taskName,
    comment: approval.comment,
    status: approval.status,
    requestedAt: approval.requestedAt.toISOString(),
    timesOutAt: iso(approval.timesOutAt),
    onTimeout: approval.onTimeout,
    decidedAt: iso(approval.decidedAt),
    decidedBy: approval.decidedBy,
    reason: approval.reason,
  };
}

/**
 * Decides an approval (DESIGN.md §7, "Approvals"): sends the decision to the run as an update,
 * the same path a decision sent from the Temporal UI or CLI takes, and answers once the run has
 * recorded it. The run is the one place decisions are taken, so each approval is decided exactly
 * once, whoever sends what. Runs started before decisions were updates have no handler for it:
 * for them the decision is recorded here first and then signaled, as it was then.
 */
async function decide(
  deps: AppDeps,
  params: { workflowId: string; executionId: string; approvalId: string },
  decision: approvalRepository.Decision,
  decidedBy: string,
  reason: string | undefined,
): Promise<{ id: string; taskName: string }> {
  const execution = await findExecution(deps, params);
  // Say what the client most needs: unknown approval, no longer pending, or the run is over.
  const approval = await pendingApproval(deps, execution.id, params.approvalId);
  assertActive(execution, decision === 'Approved' ? 'be approved' : 'be rejected');
  const client = temporalClient(deps);
  const trimmed = reason?.trim();
  const update = {
    approvalId: approval.id,
    decidedBy,
    ...(trimmed ? { reason: trimmed } : {}),
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
      return decideBySignal(deps, execution, approval.id, decision, decidedBy, reason);
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
async function pendingApproval(deps: AppDeps, executionId: string, approvalId: string) {
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
  deps: AppDeps,
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
  deps: AppDeps,
  execution: WorkflowExecutionRow,
  approvalId: string,
  decision: approvalRepository.Decision,
  decidedBy: string,
  reason: string | undefined,
): Promise<ApprovalRow> {
  const approval = await approvalRepository.decideApproval(deps.db, {
    executionId: execution.id,
    approvalId,
    decision,
    decidedBy,
    reason,
  });
  const signal = {
    approvalId: approval.id,
    decidedBy,
    ...(approval.reason !== null ? { reason: approval.reason } : {}),
  };
  try {
    const sent = await signalRun(temporalClient(deps), execution, (handle) =>
      handle.signal(decision === 'Approved' ? approveSignal : rejectSignal, signal),
    );
    if (sent === 'no-run') throw notRunning(execution.id);
  } catch (error) {
    await approvalRepository.undoApprovalDecision(deps.db, approval.id);
    throw error;
  }
  return approval;
}

/** Approvals: an execution's (`/workflows/.../approvals`), everyone's (`/approvals`), decisions. */
export const approvalHandlers = {
  listApprovals: async ({ deps, params, query }) => {
    const execution = await findExecution(deps, params);
    const paged = await approvalRepository.listApprovals(
      deps.db,
      execution.id,
      requestedPage(query),
    );
    return listReply(paged, query, toApproval);
  },

  listAllApprovals: async ({ deps, query }) => {
    if (query.workflowId !== undefined) {
      const workflow = await workflowRepository.findById(deps.db, query.workflowId);
      if (!workflow) throw workflowNotFound(query.workflowId);
    }
    const page = requestedPage(query);
    const paged = await approvalRepository.listAllApprovals(deps.db, {
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.workflowId !== undefined ? { workflowId: query.workflowId } : {}),
      ...(page ? { page } : {}),
    });
    return listReply(paged, query, toApproval);
  },

  approveApproval: async ({ deps, params, body, user }) => {
    const approval = await decide(deps, params, 'Approved', user.name, body?.reason);
    return confirmation(`Approval "${approval.id}" of task "${approval.taskName}" was approved.`);
  },

  rejectApproval: async ({ deps, params, body, user }) => {
    const approval = await decide(deps, params, 'Rejected', user.name, body?.reason);
    return confirmation(`Approval "${approval.id}" of task "${approval.taskName}" was rejected.`);
  },
} satisfies Partial<HandlerMap>;
