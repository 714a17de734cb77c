import type { TrellisClient } from '../client.js';
import { tasksOfExecution } from './execution-lists.js';
import type { components } from '../generated/schema.js';
import { taskOf } from './resolve.js';

/** A log entry with the name of the task that wrote it (none: the execution's own). */
export type NamedLogEntry = components['schemas']['LogEntry'] & {
  taskExecutionId: string | null;
  taskName?: string;
};

/** Every log entry of an execution and of its tasks (or of one task), oldest first. */
export async function readLogs(
  trellis: TrellisClient,
  path: { workflowId: string; executionId: string },
  taskName: string | undefined,
): Promise<NamedLogEntry[]> {
  const tasks = taskName
    ? [await taskOf(trellis, path, taskName)]
    : await tasksOfExecution(trellis, path);
  const entries: NamedLogEntry[] = [];
  if (!taskName) {
    const own = (after?: string) =>
      trellis.GET('/workflows/{workflowId}/executions/{executionId}/logs', {
        params: { path, query: { pageSize: 1000, after } },
      });
    for await (const entry of everyEntry(own)) entries.push({ ...entry, taskExecutionId: null });
  }
  for (const task of tasks) {
    const ofTask = (after?: string) =>
      trellis.GET('/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}/logs', {
        params: { path: { ...path, taskExecutionId: task.id }, query: { pageSize: 1000, after } },
      });
    for await (const entry of everyEntry(ofTask)) {
      entries.push({ ...entry, taskExecutionId: task.id, taskName: task.name });
    }
  }
  // A stable sort: entries of one log with the same time keep their order.
  return entries.sort((a, b) => Date.parse(a.timeStamp) - Date.parse(b.timeStamp));
}

/**
 * Every entry of a log list, page after page by cursor: a page of logs may hold fewer entries
 * than asked for before the end (it is bounded in bytes), which a numbered page after it would
 * skip; the end is an empty page.
 */
async function* everyEntry<T extends { id: string }>(
  read: (after?: string) => Promise<T[]>,
): AsyncGenerator<T, void, undefined> {
  for (let after: string | undefined; ;) {
    const page = await read(after);
    if (page.length === 0) return;
    yield* page;
    after = page.at(-1)!.id;
  }
}
