import * as approvalRepository from '#store/approval-repository.js';
import type { ApprovalView } from '#store/approval-repository.js';
import type { AuthUser } from '../auth/user.js';
import { decisionRefusal } from '#application/approvals/approvers.js';
import { decideApproval, type DecisionRequest } from '#application/approvals/decide-approval.js';
import { findExecution, iso } from '../executions/handlers.js';
import type { AppDeps, HandlerMap } from '../handler.js';
import { confirmation } from '../handler.js';
import { listReply, requestedPage } from '../lists.js';
import { findWorkflow } from '../workflows/handlers.js';
import type { RequestProject } from '../projects/request-project.js';

/** An approval as the API shows it to `user`: whether they may decide it too. */
export function toApproval(approval: ApprovalView, user?: AuthUser) {
  const refusal = user ? decisionRefusal(approval, user, approval.startedBy) : null;
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
    inputs: approval.inputs,
    decidedVia: approval.decidedVia,
    decidedViaNotification: approval.decidedViaNotification,
    form: approval.form ?? {},
    approvers: approval.approvers,
    callerMayDecide: refusal === null,
    callerRefusal: refusal,
  };
}

/** Decides an approval of an execution the request names (docs/ARCHITECTURE.md#approvals). */
async function decide(
  deps: AppDeps,
  project: RequestProject,
  params: { workflowId: string; executionId: string; approvalId: string },
  decision: approvalRepository.Decision,
  request: DecisionRequest,
): Promise<{ id: string; taskName: string }> {
  const execution = await findExecution(deps, project, params);
  return decideApproval(deps, execution, params.approvalId, decision, request);
}

/** Approvals: an execution's (`/workflows/.../approvals`), everyone's (`/approvals`), decisions. */
export const approvalHandlers = {
  listApprovals: async ({ deps, project, params, query, user }) => {
    const execution = await findExecution(deps, project, params);
    const paged = await approvalRepository.listApprovals(
      deps.db,
      execution.id,
      requestedPage(query),
    );
    return listReply(paged, query, (approval) => toApproval(approval, user));
  },

  listAllApprovals: async ({ deps, project, query, user }) => {
    if (query.workflowId !== undefined) await findWorkflow(deps, project, query.workflowId);
    const page = requestedPage(query);
    const paged = await approvalRepository.listAllApprovals(deps.db, {
      projectId: project.id,
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.workflowId !== undefined ? { workflowId: query.workflowId } : {}),
      ...(page ? { page } : {}),
    });
    return listReply(paged, query, (approval) => toApproval(approval, user));
  },

  approveApproval: async ({ deps, project, params, body, user }) => {
    const approval = await decide(deps, project, params, 'Approved', {
      decidedBy: user.name,
      reason: body?.reason,
      inputs: body?.inputs,
      user,
    });
    return confirmation(`Approval "${approval.id}" of task "${approval.taskName}" was approved.`);
  },

  rejectApproval: async ({ deps, project, params, body, user }) => {
    const approval = await decide(deps, project, params, 'Rejected', {
      decidedBy: user.name,
      reason: body?.reason,
      inputs: body?.inputs,
      user,
    });
    return confirmation(`Approval "${approval.id}" of task "${approval.taskName}" was rejected.`);
  },
} satisfies Partial<HandlerMap>;
