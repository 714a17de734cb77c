import type { components } from '@trellis/sdk';

type Schemas = components['schemas'];
export type ExecutionStatus = Schemas['ExecutionStatus'];
export type TaskStatus = Schemas['TaskStatus'];
export type ApprovalStatus = Schemas['ApprovalStatus'];
export type LogEntry = Schemas['LogEntry'];

/**
 * What happens in one run, as the server's event stream names it: each event's `id` is larger
 * than the one before, `event` is its kind and `data` what changed.
 */
export type RunEvent =
  | { id: number; event: 'execution'; data: ExecutionEventData }
  | { id: number; event: 'task'; data: TaskEventData }
  | { id: number; event: 'log'; data: LogEventData }
  | { id: number; event: 'approval'; data: ApprovalEventData };

export interface ExecutionEventData {
  status: ExecutionStatus;
  message: string;
}

export interface TaskEventData {
  taskExecutionId: string;
  name: string;
  status: TaskStatus;
  message: string;
}

/** A log entry, of the execution itself (`taskExecutionId` null) or of one of its tasks. */
export interface LogEventData extends LogEntry {
  taskExecutionId: string | null;
}

export interface ApprovalEventData {
  id: string;
  taskName: string;
  status: ApprovalStatus;
}

const terminalExecution: readonly ExecutionStatus[] = ['Completed', 'Failed', 'Canceled'];
const finishedTask: readonly TaskStatus[] = ['Completed', 'Failed', 'Skipped', 'Canceled'];

/** True once an execution can no longer change. */
export const isTerminal = (status: ExecutionStatus): boolean => terminalExecution.includes(status);

/** True for a task that has run its course (whatever the outcome). */
export const isTaskFinished = (status: TaskStatus): boolean => finishedTask.includes(status);
