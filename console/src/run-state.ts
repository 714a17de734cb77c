/**
 * A run as its event stream tells it (SDK `watchExecution`): each event folded into the state the
 * run page draws, so that the page follows the run without polling. The stream starts with the
 * run's past, so the state is the same whether the page opened at the start or the end.
 */
import type { ExecutionEvent, components } from '@trellis/sdk';

type Schemas = components['schemas'];
export type TaskStatus = Schemas['TaskStatus'];
export type ExecutionStatus = Schemas['ExecutionStatus'];
export type LogEntry = Schemas['LogEntry'];

export interface TaskState {
  taskExecutionId: string;
  status: TaskStatus;
  message: string;
  /**
   * Attempts that ran (or run now): one, plus one per retry and one per run cut short by its
   * worker stopping, as the task's events count them (counted here for events from before).
   */
  attempts: number;
  /** Of `attempts`, those interrupted (their worker stopped); each ran again as the next. */
  interruptedAttempts: number;
  /** Whether an attempt runs now (counted already). */
  attemptOpen: boolean;
  /**
   * When it started and when it reached its final status: the task's own times, which its events
   * carry (the times the events were recorded, for events from before they did).
   */
  startedAt: string | null;
  endedAt: string | null;
}

export interface RunState {
  status: ExecutionStatus | null;
  message: string;
  /** By task name. */
  tasks: Record<string, TaskState>;
  /** The merged timeline: the execution's entries and its tasks', in the order written. */
  logs: LogEntry[];
  /** The number of the last event folded in. */
  lastEventId: number;
  /** Bumped by each approval event: the page reads the approvals again. */
  approvalChanges: number;
}

export const emptyRun: RunState = {
  status: null,
  message: '',
  tasks: {},
  logs: [],
  lastEventId: 0,
  approvalChanges: 0,
};

const finalTaskStatuses: readonly TaskStatus[] = ['Completed', 'Failed', 'Skipped', 'Canceled'];
export const finalExecutionStatuses: readonly ExecutionStatus[] = [
  'Completed',
  'Failed',
  'Canceled',
];
/** How many log entries the page keeps (the latest): a long run's log stays a click away. */
export const maxLogEntries = 2_000;

/** The state after `events` (in stream order; one already folded in is skipped). */
export function foldEvents(state: RunState, events: readonly ExecutionEvent[]): RunState {
  let next = state;
  for (const event of events) next = foldEvent(next, event);
  return next;
}

function foldEvent(state: RunState, event: ExecutionEvent): RunState {
  if (event.id <= state.lastEventId) return state;
  const next = { ...state, lastEventId: event.id };
  switch (event.event) {
    case 'execution':
      return { ...next, status: event.data.status, message: event.data.message };
    case 'task': {
      const { name, status, message, at, taskExecutionId, startedAt, endedAt } = event.data;
      const { attempts, interruptedAttempts } = event.data;
      const before = state.tasks[name];
      // An attempt is counted when it is first seen: running, or already over when it was quicker
      // than the stream (Pending straight to Completed, or to Retrying).
      const endsAttempt = status === 'Completed' || status === 'Failed' || status === 'Retrying';
      const seesAttempt = status === 'Running' || endsAttempt;
      const counted = before?.attemptOpen === true;
      const task: TaskState = {
        taskExecutionId,
        status,
        message,
        attempts: attempts ?? (before?.attempts ?? 0) + (seesAttempt && !counted ? 1 : 0),
        interruptedAttempts: interruptedAttempts ?? before?.interruptedAttempts ?? 0,
        attemptOpen: status === 'Running',
        startedAt: startedAt ?? before?.startedAt ?? (seesAttempt ? at : null),
        endedAt: finalTaskStatuses.includes(status) ? (endedAt ?? at) : null,
      };
      return { ...next, tasks: { ...state.tasks, [name]: task } };
    }
    case 'log':
      return { ...next, logs: withEntries(state.logs, [event.data]) };
    case 'approval':
      return { ...next, approvalChanges: state.approvalChanges + 1 };
  }
}

/** `logs` with `entries` added, each once (by id), in the order written, the latest kept. */
export function withEntries(logs: readonly LogEntry[], entries: readonly LogEntry[]): LogEntry[] {
  const known = new Set(logs.map((entry) => entry.id));
  const added = entries.filter((entry) => !known.has(entry.id));
  if (added.length === 0) return logs as LogEntry[];
  const merged = [...logs, ...added].sort(
    (a, b) => Date.parse(a.timeStamp) - Date.parse(b.timeStamp),
  );
  return merged.slice(-maxLogEntries);
}
