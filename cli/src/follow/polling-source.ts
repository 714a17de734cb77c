/**
 * A run's events made by polling the API: the execution, its tasks, its approvals (and, on
 * request, its logs) read through the SDK every `intervalMs`, each change yielded as the event the
 * server's event stream sends for it. This module is the one source of events in the CLI: once
 * the SDK has `watchExecution` (the server's stream), `executionEvents` becomes that stream and
 * nothing else changes.
 */
import type { TrellisClient } from '@trellis/sdk';
import { approvalsOfExecution, tasksOfExecution } from '../execution-lists.js';
import {
  isTaskFinished,
  isTerminal,
  type ApprovalStatus,
  type ExecutionStatus,
  type LogEntry,
  type RunEvent,
} from './events.js';

export interface EventOptions {
  /** Also yield `log` events (the execution's own entries and its tasks'). Default false. */
  logs?: boolean;
  /** Time between two polls. Default 500 ms. */
  intervalMs?: number;
  /** Stops the polling (the iterator rejects with the signal's reason). */
  signal?: AbortSignal;
}

type Change = RunEvent extends infer E ? (E extends RunEvent ? Omit<E, 'id'> : never) : never;

/** The events of one execution, until (and including) the one that ends it. */
export async function* executionEvents(
  client: TrellisClient,
  workflowId: string,
  executionId: string,
  options: EventOptions = {},
): AsyncGenerator<RunEvent, void, undefined> {
  const { logs = false, intervalMs = 500, signal } = options;
  const path = { workflowId, executionId };
  const request = signal ? { signal } : {};
  const taskStates = new Map<string, string>();
  const approvalStates = new Map<string, ApprovalStatus>();
  const logStreams = new Map<string | null, LogStream>();
  let executionStatus: ExecutionStatus | undefined;
  let nextId = 1;

  for (;;) {
    const changes: Change[] = [];
    // The execution first: tasks read after a final status are at least as new as it.
    const execution = await client.GET('/workflows/{workflowId}/executions/{executionId}', {
      params: { path },
      ...request,
    });
    const tasks = await tasksOfExecution(client, path, signal);
    for (const task of tasks) {
      const state = `${task.status}\n${task.message}`;
      if (taskStates.get(task.id) === state) continue;
      taskStates.set(task.id, state);
      changes.push({
        event: 'task',
        data: {
          taskExecutionId: task.id,
          name: task.name,
          status: task.status,
          message: task.message,
        },
      });
    }

    const awaitingDecision =
      execution.status === 'Paused' ||
      tasks.some((task) => task.status === 'WaitingForApproval') ||
      [...approvalStates.values()].includes('Pending');
    if (awaitingDecision) {
      const approvals = await approvalsOfExecution(client, path, signal);
      for (const approval of approvals) {
        if (approvalStates.get(approval.id) === approval.status) continue;
        approvalStates.set(approval.id, approval.status);
        const { id, taskName, status } = approval;
        // A request follows its task's WaitingForApproval; a decision comes before what it caused.
        const change: Change = { event: 'approval', data: { id, taskName, status } };
        if (status === 'Pending') changes.push(change);
        else changes.unshift(change);
      }
    }

    if (logs) {
      const entries: Change[] = [];
      const streams: [string | null, boolean][] = [
        [null, isTerminal(execution.status)],
        ...tasks
          .filter((task) => task.status !== 'Pending')
          .map((task): [string, boolean] => [task.id, isTaskFinished(task.status)]),
      ];
      for (const [taskExecutionId, finished] of streams) {
        let stream = logStreams.get(taskExecutionId);
        if (!stream) logStreams.set(taskExecutionId, (stream = new LogStream()));
        if (stream.drained) continue;
        const fresh = await stream.read((page, pageSize) => {
          const query = { page, pageSize };
          return taskExecutionId
            ? client.page(
                '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}/logs',
                { params: { path: { ...path, taskExecutionId }, query }, ...request },
              )
            : client.page('/workflows/{workflowId}/executions/{executionId}/logs', {
                params: { path, query },
                ...request,
              });
        });
        for (const entry of fresh)
          entries.push({ event: 'log', data: { ...entry, taskExecutionId } });
        // Read once more after the task was seen finished: then it writes nothing more.
        stream.drained = finished;
      }
      changes.push(...entries.sort((a, b) => logTime(a) - logTime(b)));
    }

    if (execution.status !== executionStatus) {
      executionStatus = execution.status;
      // A run starts before its tasks do; it pauses or ends because of them.
      const change: Change = {
        event: 'execution',
        data: { status: execution.status, message: '' },
      };
      if (execution.status === 'Pending' || execution.status === 'Running') changes.unshift(change);
      else changes.push(change);
    }
    for (const change of changes) yield { ...change, id: nextId++ };
    if (isTerminal(execution.status)) return;
    await sleep(intervalMs, signal);
  }
}

const logTime = (change: Change) =>
  change.event === 'log' ? Date.parse(change.data.timeStamp) : 0;

/** The entries of one log (oldest first) not yet yielded. */
class LogStream {
  private readonly seen = new Set<string>();
  drained = false;

  async read(
    fetchPage: (
      page: number,
      pageSize: number,
    ) => Promise<{ data: LogEntry[]; pagination: { totalPages: number } }>,
  ): Promise<LogEntry[]> {
    const pageSize = 100;
    // From one page before the last entry seen: an entry committed late sorts before newer ones.
    let page = Math.max(1, Math.floor(this.seen.size / pageSize));
    const fresh: LogEntry[] = [];
    for (;;) {
      const { data, pagination } = await fetchPage(page, pageSize);
      for (const entry of data) {
        if (this.seen.has(entry.id)) continue;
        this.seen.add(entry.id);
        fresh.push(entry);
      }
      if (page >= pagination.totalPages || data.length < pageSize) return fresh;
      page += 1;
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}
