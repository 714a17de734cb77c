/**
 * What the database holds about a workflow's executions, counted: the exact-row checks of the
 * resilience tests ("no row lost or duplicated") read it after the load or the fault.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '#store/tables.js';

export interface Ledger {
  executions: number;
  executionsByStatus: Record<string, number>;
  /** Executions still Pending, Running or Paused. */
  active: number;
  tasks: number;
  tasksByStatus: Record<string, number>;
  /** Tasks that record more than one attempt (a re-run after a crash must reuse the attempt). */
  retriedTasks: number;
  /**
   * Task runs cut short by a stop or a crash and found by the run after them: each is logged
   * once, as a Warning, and takes no attempt (`interrupted_attempts`).
   */
  interruptedAttempts: number;
  /** The executions' own log entries. */
  executionLogs: number;
  /** The tasks' log entries. */
  taskLogs: number;
  /** Log entries whose (execution, task, message) appears more than once. */
  duplicateLogs: number;
}

const activeStatuses = ['Pending', 'Running', 'Paused'];

/** Counts the rows of every execution of `workflowId`. */
export async function ledgerOf(db: Kysely<Database>, workflowId: string): Promise<Ledger> {
  const executions = await db
    .selectFrom('workflowExecution')
    .select(['status', (eb) => eb.fn.countAll<string>().as('count')])
    .where('workflowId', '=', workflowId)
    .groupBy('status')
    .execute();
  const tasks = await db
    .selectFrom('taskExecution')
    .select([
      'status',
      (eb) => eb.fn.countAll<string>().as('count'),
      sql<string>`count(*) filter (where attempts > 1)`.as('retried'),
      sql<string>`coalesce(sum(interrupted_attempts), 0)`.as('interrupted'),
    ])
    .where('workflowId', '=', workflowId)
    .groupBy('status')
    .execute();
  const logs = await db
    .selectFrom('logEntry')
    .innerJoin('workflowExecution', 'workflowExecution.id', 'logEntry.executionId')
    .select([
      sql<string>`count(*) filter (where log_entry.task_execution_id is null)`.as('own'),
      sql<string>`count(*) filter (where log_entry.task_execution_id is not null)`.as('task'),
    ])
    .where('workflowExecution.workflowId', '=', workflowId)
    .executeTakeFirstOrThrow();
  const duplicates = await db
    .selectFrom(
      db
        .selectFrom('logEntry')
        .innerJoin('workflowExecution', 'workflowExecution.id', 'logEntry.executionId')
        .select(sql<string>`count(*) - 1`.as('extra'))
        .where('workflowExecution.workflowId', '=', workflowId)
        .groupBy(['logEntry.executionId', 'logEntry.taskExecutionId', 'logEntry.message'])
        .having(sql`count(*)`, '>', 1)
        .as('repeated'),
    )
    .select(sql<string>`coalesce(sum(extra), 0)`.as('extra'))
    .executeTakeFirstOrThrow();

  const byStatus = (rows: { status: string; count: string }[]) =>
    Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
  const executionsByStatus = byStatus(executions);
  const sum = (counts: Record<string, number>) =>
    Object.values(counts).reduce((total, count) => total + count, 0);
  const tasksByStatus = byStatus(tasks);
  return {
    executions: sum(executionsByStatus),
    executionsByStatus,
    active: activeStatuses.reduce((total, status) => total + (executionsByStatus[status] ?? 0), 0),
    tasks: sum(tasksByStatus),
    tasksByStatus,
    retriedTasks: tasks.reduce((total, row) => total + Number(row.retried), 0),
    interruptedAttempts: tasks.reduce((total, row) => total + Number(row.interrupted), 0),
    executionLogs: Number(logs.own),
    taskLogs: Number(logs.task),
    duplicateLogs: Number(duplicates.extra),
  };
}

/**
 * Polls until `expected` executions of `workflowId` exist and none is active; the final ledger.
 * Throws with the last ledger when `timeoutMs` passes first.
 */
export async function waitUntilSettled(
  db: Kysely<Database>,
  workflowId: string,
  expected: number,
  timeoutMs: number,
): Promise<Ledger> {
  const deadline = Date.now() + timeoutMs;
  let last: Ledger | string = 'no answer from the database yet';
  for (;;) {
    try {
      last = await ledgerOf(db, workflowId);
      if (last.executions >= expected && last.active === 0) return last;
    } catch (error) {
      // The database may be restarting under a fault test: ask again.
      last = `database error: ${(error as Error).message}`;
    }
    if (Date.now() > deadline) {
      const state = typeof last === 'string' ? last : JSON.stringify(last.executionsByStatus);
      throw new Error(`${expected} executions did not settle in ${timeoutMs} ms: ${state}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
