import * as approvalRepository from '../../../core/src/db/approval-repository.js';
import type { ApprovalView } from '../../../core/src/db/approval-repository.js';
import * as executionRepository from '../../../core/src/db/execution-repository.js';
import type { ApprovalRow } from '../../../core/src/db/tables.js';
import * as workflowRepository from '../../../core/src/db/workflow-repository.js';
import { Conflict, NotFound } from '../../../core/src/errors.js';
import { approveSignal, rejectSignal } from '../../../core/src/temporal/messages.js';
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
 * Records a person's decision exactly once, then tells the run; undone if the run cannot hear it.
 * The run acts on the decision recorded here (DESIGN.md §7, "Approvals").
 */
async function decide(
  deps: AppDeps,
  params: { workflowId: string; executionId: string; approvalId: string },
  decision: approvalRepository.Decision,
  decidedBy: string,
  reason: string | undefined,
): Promise<ApprovalRow> {
  const execution = await findExecution(deps, params);
  const client = temporalClient(deps);
  if (!executionRepository.isExecutionActive(execution.status)) {
    // Say what the client most needs: unknown approval, no longer pending, or the run is over.
    const existing = await approvalRepository.findApproval(
      deps.db,
      execution.id,
      params.approvalId,
    );
    if (!existing) {
      throw new NotFound(
        `Approval ${params.approvalId} was not found in execution ${execution.id}.`,
        { code: 'approval.not_found' },
      );
    }
    if (existing.status !== 'Pending') throw approvalRepository.notPending(existing);
    assertActive(execution, decision === 'Approved' ? 'be approved' : 'be rejected');
  }
  const approval = await approvalRepository.decideApproval(deps.db, {
    executionId: execution.id,
    approvalId: params.approvalId,
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
    const sent = await signalRun(client, execution, (handle) =>
      handle.signal(decision === 'Approved' ? approveSignal : rejectSignal, signal),
    );
    if (sent === 'no-run') {
      throw new Conflict(`Execution "${execution.id}" is no longer running.`, {
        code: 'execution.not_running',
      });
    }
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
