import type { Kysely } from 'kysely';
import type { LogEntryView } from './log-repository.js';
import type { ApprovalStatus, Database, ExecutionStatus, TaskStatus } from './tables.js';

/**
 * The event log of executions: what `GET .../events` streams. Database triggers write it in the
 * transaction of each change (migration `2026-11-25T00-00-00-execution-events`), numbering an
 * execution's events 1, 2, 3... in commit order under a lock of the execution (migration
 * `2026-11-29T20-30-00-event-numbers-without-counter`); this module only reads it.
 */

/** The channel a committed transaction that added events to an execution notifies, with its id. */
export const executionEventsChannel = 'trellis_execution_events';

interface EventBase {
  /** The event's number within its execution: 1, 2, 3... */
  id: number;
}

export interface ExecutionChanged extends EventBase {
  type: 'execution';
  data: { status: ExecutionStatus; message: string; at: Date; dryRun?: boolean };
}

export interface TaskChanged extends EventBase {
  type: 'task';
  data: {
    taskExecutionId: string;
    name: string;
    status: TaskStatus;
    message: string;
    /** The task's own start and end (its row's), null while it has none or for events recorded before they were kept. */
    startedAt: Date | null;
    endedAt: Date | null;
    /** The task's attempts, interrupted runs included, and those; absent in events from before. */
    attempts?: number;
    interruptedAttempts?: number;
    at: Date;
  };
}

export interface ApprovalChanged extends EventBase {
  type: 'approval';
  data: {
    id: string;
    taskExecutionId: string;
    taskName: string;
    status: ApprovalStatus;
    decidedBy: string | null;
    at: Date;
  };
}

export interface LogWritten extends EventBase {
  type: 'log';
  data: LogEntryView;
}

export type ExecutionEvent = ExecutionChanged | TaskChanged | ApprovalChanged | LogWritten;

const finished: readonly ExecutionStatus[] = ['Completed', 'Failed', 'Canceled'];

/** Whether an event is the execution's terminal status: nothing the stream follows comes after. */
export function isTerminal(event: ExecutionEvent): boolean {
  return event.type === 'execution' && finished.includes(event.data.status);
}

/**
 * Whether an execution has recorded its final status, so that its terminal event exists (the
 * triggers write it in the same transaction), or is gone altogether: no event will follow.
 */
export async function hasEnded(db: Kysely<Database>, executionId: string): Promise<boolean> {
  const row = await db
    .selectFrom('workflowExecution')
    .select('status')
    .where('id', '=', executionId)
    .executeTakeFirst();
  return row === undefined || finished.includes(row.status);
}

/** Up to `limit` events of an execution after event `after` (0: from the start), in order. */
export async function readEvents(
  db: Kysely<Database>,
  executionId: string,
  after: number,
  limit: number,
): Promise<ExecutionEvent[]> {
  const rows = await db
    .selectFrom('executionEvent as e')
    .leftJoin('logEntry as l', 'l.id', 'e.logEntryId')
    .select([
      'e.seq',
      'e.type',
      'e.data',
      'e.recordedAt',
      'l.id as logId',
      'l.taskExecutionId as logTaskExecutionId',
      'l.message as logMessage',
      'l.level as logLevel',
      'l.timeStamp as logTimeStamp',
      'l.exception as logException',
    ])
    .where('e.executionId', '=', executionId)
    .where('e.seq', '>', String(after))
    .orderBy('e.seq')
    .limit(limit)
    .execute();
  return rows.map((row) => {
    const id = Number(row.seq);
    if (row.type === 'log') {
      return {
        id,
        type: 'log',
        data: {
          // A log event's entry is deleted only with its execution, which takes the event along.
          id: row.logId!,
          taskExecutionId: row.logTaskExecutionId,
          message: row.logMessage!,
          level: row.logLevel!,
          timeStamp: row.logTimeStamp!,
          exception: row.logException,
        },
      };
    }
    if (row.type === 'task') {
      const { startedAt, endedAt, ...data } = row.data as { startedAt?: string; endedAt?: string };
      const time = (value: string | null | undefined) => (value ? new Date(value) : null);
      return {
        id,
        type: row.type,
        data: { ...data, startedAt: time(startedAt), endedAt: time(endedAt), at: row.recordedAt },
      } as ExecutionEvent;
    }
    return { id, type: row.type, data: { ...row.data, at: row.recordedAt } } as ExecutionEvent;
  });
}
