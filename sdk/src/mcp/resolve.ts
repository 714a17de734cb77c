import type { TrellisClient } from '../client.js';
import { ToolError } from './tool-error.js';
import { approvalsOfExecution, tasksOfExecution } from './execution-lists.js';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for text shaped like an id (a UUID). */
export const isId = (text: string): boolean => uuid.test(text);

/** A workflow's id from its id or its name (an id is taken as it is; the server checks it). */
export async function workflowIdOf(client: TrellisClient, workflow: string): Promise<string> {
  if (isId(workflow)) return workflow;
  for await (const item of client.all('/workflows', { params: { query: { pageSize: 1000 } } })) {
    if (item.name === workflow) return item.id;
  }
  throw new ToolError(
    `No workflow is named "${workflow}".`,
    'trellis workflows list shows the stored workflows; give a name or an id.',
  );
}

/** A task of an execution by its name. */
export async function taskOf(
  client: TrellisClient,
  path: { workflowId: string; executionId: string },
  name: string,
): Promise<{ id: string; name: string }> {
  const tasks = await tasksOfExecution(client, path);
  const task = tasks.find((candidate) => candidate.name === name);
  if (!task) {
    throw new ToolError(
      `Execution ${path.executionId} has no task named "${name}".`,
      `Its tasks: ${tasks.map((candidate) => candidate.name).join(', ') || 'none'}.`,
    );
  }
  return task;
}

/**
 * An approval's id from its id or the name of its task (the pending approval of that task, else
 * its latest, so that deciding it again gets the server's answer).
 */
export async function approvalIdOf(
  client: TrellisClient,
  path: { workflowId: string; executionId: string },
  approval: string,
): Promise<string> {
  if (isId(approval)) return approval;
  const approvals = await approvalsOfExecution(client, path);
  const ofTask = approvals.filter((candidate) => candidate.taskName === approval);
  const chosen = ofTask.find((candidate) => candidate.status === 'Pending') ?? ofTask.at(-1);
  if (chosen) return chosen.id;
  const known = [...new Set(approvals.map((candidate) => candidate.taskName))];
  throw new ToolError(
    `Execution ${path.executionId} has no approval for a task named "${approval}".`,
    known.length > 0
      ? `Approvals were requested for: ${known.join(', ')}.`
      : 'No approval has been requested in it (yet).',
  );
}
