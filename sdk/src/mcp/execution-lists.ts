import type { TrellisClient } from '../client.js';
import type { components } from '../generated/schema.js';

type Schemas = components['schemas'];
type ExecutionPath = { workflowId: string; executionId: string };

/** Every task of an execution, in the definition's order, page by page (a run may have thousands). */
export async function tasksOfExecution(
  trellis: TrellisClient,
  path: ExecutionPath,
  signal?: AbortSignal,
): Promise<Schemas['TaskListItem'][]> {
  const tasks: Schemas['TaskListItem'][] = [];
  for await (const task of trellis.all('/workflows/{workflowId}/executions/{executionId}/tasks', {
    params: { path, query: { pageSize: 1000 } },
    ...(signal ? { signal } : {}),
  })) {
    tasks.push(task);
  }
  return tasks;
}

/** Every approval of an execution, page by page. */
export async function approvalsOfExecution(
  trellis: TrellisClient,
  path: ExecutionPath,
  signal?: AbortSignal,
): Promise<Schemas['Approval'][]> {
  const approvals: Schemas['Approval'][] = [];
  for await (const approval of trellis.all(
    '/workflows/{workflowId}/executions/{executionId}/approvals',
    { params: { path, query: { pageSize: 1000 } }, ...(signal ? { signal } : {}) },
  )) {
    approvals.push(approval);
  }
  return approvals;
}
