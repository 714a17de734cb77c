/**
 * The statuses of executions, tasks and approvals: the words the database columns hold, the
 * workflow reports in its queries, and the API returns.
 */
export type ExecutionStatus =
  'Pending' | 'Running' | 'Paused' | 'Completed' | 'Failed' | 'Canceled';
export type TaskStatus =
  | 'Pending'
  | 'Running'
  | 'Retrying'
  | 'WaitingForApproval'
  | 'Completed'
  | 'Failed'
  | 'Skipped'
  | 'Canceled';
export type ApprovalStatus = 'Pending' | 'Approved' | 'Rejected' | 'Canceled';
