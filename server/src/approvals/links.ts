/**
 * Approval links (`/approvals/decide/{token}`): public, the token is the credential. Reading one
 * shows the approval and its form; deciding through one records the decision as made through
 * the notification's link (`decidedVia: Link`), once.
 */
import * as approvalRepository from '#store/approval-repository.js';
import * as executionRepository from '#store/execution-repository.js';
import * as notificationRepository from '#store/notification-repository.js';
import { NotFound } from '#definition/errors.js';
import { checkApprovalLink, type LinkCheck } from '#application/notifications/approval-links.js';
import type { AppDeps, HandlerMap } from '../handler.js';
import { confirmation } from '../handler.js';
import { HttpError } from '../http-error.js';
import { noteAudit, noteProjectOf } from '../audit/operations.js';
import { decideApproval } from '#application/approvals/decide-approval.js';

/** Who an approval link's decision is recorded as decided by. */
export const linkDecider = 'approval link';

const refusals: Record<Exclude<LinkCheck, { ok: true }>['reason'], [number, string, string]> = {
  forged: [
    403,
    'approval_link.invalid',
    'This approval link is not valid: it is malformed, or was not signed by this server.',
  ],
  expired: [410, 'approval_link.expired', 'This approval link has expired.'],
  used: [410, 'approval_link.used', 'This approval link was used already: it decides only once.'],
};

async function validLink(deps: AppDeps, token: string) {
  const checked = await checkApprovalLink(deps.db, token);
  if (!checked.ok) {
    const [status, code, message] = refusals[checked.reason];
    throw new HttpError(status, [{ code, message }]);
  }
  const approval = await approvalRepository.findApprovalById(deps.db, checked.approvalId);
  if (!approval) {
    throw new NotFound('The approval this link decides no longer exists.', {
      code: 'approval.not_found',
    });
  }
  if (approval.status !== 'Pending') throw approvalRepository.notPending(approval);
  return { link: checked, approval };
}

export const approvalLinkHandlers = {
  readApprovalLink: async ({ deps, params }) => {
    const { link, approval } = await validLink(deps, params.token);
    return {
      data: {
        approvalId: approval.id,
        workflowId: approval.workflowId,
        workflowName: approval.workflowName,
        executionId: approval.executionId,
        taskName: approval.taskName,
        comment: approval.comment,
        status: approval.status,
        requestedAt: approval.requestedAt.toISOString(),
        form: approval.form ?? {},
        expiresAt: link.expiresAt.toISOString(),
      },
    };
  },

  decideApprovalLink: async ({ deps, params, body, log, req }) => {
    noteAudit(req, { actor: linkDecider });
    const { link, approval } = await validLink(deps, params.token);
    noteAudit(req, {
      targets: { linkId: link.linkId, approvalId: approval.id, executionId: approval.executionId },
    });
    // Claimed first, so that two uses at once decide at most once; given back when the decision
    // does not happen (bad inputs, Temporal unavailable), so the link can be used again.
    if (!(await notificationRepository.claimApprovalLink(deps.db, link.linkId))) {
      const [status, code, message] = refusals.used;
      throw new HttpError(status, [{ code, message }]);
    }
    const decision = body.decision === 'Approve' ? 'Approved' : 'Rejected';
    let decided;
    try {
      const execution = await executionRepository.findExecution(deps.db, approval.executionId);
      if (!execution) throw new NotFound('The execution of this approval no longer exists.');
      await noteProjectOf(req, deps.db, execution.projectId);
      decided = await decideApproval(deps, execution, approval.id, decision, {
        decidedBy: linkDecider,
        reason: body.reason,
        inputs: body.inputs,
        link: link.eventId,
      });
    } catch (error) {
      await notificationRepository.releaseApprovalLink(deps.db, link.linkId);
      throw error;
    }
    log.info(
      { approvalId: decided.id, eventId: link.eventId, decision },
      'approval decided through its link',
    );
    return confirmation(
      `Approval "${decided.id}" of task "${decided.taskName}" was ${decision.toLowerCase()} through its link.`,
    );
  },
} satisfies Partial<HandlerMap>;
