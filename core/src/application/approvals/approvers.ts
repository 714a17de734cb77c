/**
 * Who may decide an approval (`manualApproval.approvers`): a holder of one of its roles or one of
 * its users, and not the user who started the run unless `allowSelfApproval`. Without approvers,
 * anyone who may call approve or reject (the seed's behaviour).
 */
import type { Role } from '#platform/config/types.js';
import type { Approvers } from '#definition/types.js';

/** Who decides: a user's name and roles. */
export interface Decider {
  name: string;
  roles: readonly Role[];
}

/** Why `user` may not decide the approval, naming who may; null when they may. */
export function decisionRefusal(
  approval: { id: string; taskName: string; approvers: Approvers | null },
  user: Decider,
  startedBy: string | null,
): string | null {
  const { approvers } = approval;
  if (!approvers) return null;
  const roles = approvers.roles ?? [];
  const users = approvers.users ?? [];
  const listed = roles.length > 0 || users.length > 0;
  const named = users.includes(user.name) || user.roles.some((role) => roles.includes(role));
  const self =
    approvers.allowSelfApproval !== true && startedBy !== null && startedBy === user.name;
  if ((!listed || named) && !self) return null;
  const who = [
    ...(users.length > 0 ? [`the users ${users.map((name) => `"${name}"`).join(', ')}`] : []),
    ...(roles.length > 0 ? [`holders of the roles ${roles.join(', ')}`] : []),
  ];
  const may = who.length > 0 ? who.join(' or ') : 'anyone who may approve';
  const notSelf =
    approvers.allowSelfApproval === true
      ? ''
      : `, except the user who started the run${startedBy !== null ? ` ("${startedBy}")` : ''}`;
  const because = self && (!listed || named) ? 'started the run' : 'is not an approver';
  return `User "${user.name}" may not decide approval ${approval.id} of task "${approval.taskName}" (${because}): it may be decided by ${may}${notSelf} (manualApproval.approvers).`;
}
