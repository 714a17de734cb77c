import {
  sql,
  type Kysely,
  type Transaction,
  type UpdateQueryBuilder,
  type UpdateResult,
  type Updateable,
} from 'kysely';
import { Conflict, NotFound } from '../errors.js';
import { newId, isUuid } from './ids.js';
import { paginate, type Page, type Paged } from './paging.js';
import type {
  ApprovalRow,
  ApprovalStatus,
  Database,
  ExecutionStatus,
  LogEntryRow,
  LogLevel,
  TaskExecutionRow,
  TaskStatus,
  WorkflowExecutionRow,
  WorkflowExecutionTable,
} from './tables.js';

/**
 * Executions, their tasks, approvals and logs. Every write the engine makes is idempotent: a
 * retried activity or a replayed workflow writes the same values again (status writes are keyed
 * by execution, task and attempt; log rows by a deterministic `dedupeKey`), so nothing is
 * duplicated and nothing moves backwards.
 */

type Db = Kysely<Database> | Transaction<Database>;

const ACTIVE_EXECUTION: ExecutionStatus[] = ['Pending', 'Running', 'Paused'];
const FINISHED_TASK: TaskStatus[] = ['Completed', 'Failed', 'Skipped', 'Canceled'];

/** Whether an execution can still change (and so be canceled). */
export function isExecutionActive(status: ExecutionStatus): boolean {
  return ACTIVE_EXECUTION.includes(status);
}

// ---------------------------------------------------------------------------------------------
// Executions
// ---------------------------------------------------------------------------------------------

export interface NewExecution {
  id?: string;
  workflowId: string;
  workflowName: string;
  /** The definition text, snapshotted. */
  definition: string;
  /** Task names in definition order; empty for an execution that failed before it could run. */
  taskNames: string[];
  triggerId?: string | null;
  temporalWorkflowId: string;
  status: ExecutionStatus;
  message?: string;
  executionStart?: Date;
  executionEnd?: Date | null;
}

/**
 * Creates an execution and its task rows (Pending) in one transaction. Keyed by the Temporal
 * workflow id: when a row for it exists already (a retried schedule fire), nothing is written
 * and the existing execution is returned with `created: false`.
 */
export async function createExecutionWithTasks(
  db: Kysely<Database>,
  input: NewExecution,
): Promise<{ execution: WorkflowExecutionRow; created: boolean }> {
  return db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto('workflowExecution')
      .values({
        id: input.id ?? newId(),
        workflowId: input.workflowId,
        workflowName: input.workflowName,
        definition: input.definition,
        status: input.status,
        message: input.message ?? '',
        triggerId: input.triggerId ?? null,
        temporalWorkflowId: input.temporalWorkflowId,
        executionStart: input.executionStart ?? new Date(),
        executionEnd: input.executionEnd ?? null,
      })
      .onConflict((oc) => oc.column('temporalWorkflowId').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!inserted) {
      const existing = await findByTemporalWorkflowId(trx, input.temporalWorkflowId);
      if (!existing) throw new Error(`Execution of ${input.temporalWorkflowId} vanished`);
      return { execution: existing, created: false };
    }
    if (input.taskNames.length > 0) {
      // Chunked: PostgreSQL takes at most 65535 bind parameters per statement.
      const rows = input.taskNames.map((name, position) => ({
        id: newId(),
        executionId: inserted.id,
        workflowId: input.workflowId,
        name,
        position,
        status: 'Pending' as const,
        message: '',
      }));
      for (let start = 0; start < rows.length; start += 5000) {
        await trx
          .insertInto('taskExecution')
          .values(rows.slice(start, start + 5000))
          .execute();
      }
    }
    return { execution: inserted, created: true };
  });
}

/** An execution of a workflow; undefined when unknown or of another workflow. */
export async function findById(
  db: Db,
  workflowId: string,
  executionId: string,
): Promise<WorkflowExecutionRow | undefined> {
  if (!isUuid(workflowId) || !isUuid(executionId)) return undefined;
  return db
    .selectFrom('workflowExecution')
    .selectAll()
    .where('id', '=', executionId)
    .where('workflowId', '=', workflowId)
    .executeTakeFirst();
}

/** An execution by id alone (the engine's view). */
export async function findExecution(
  db: Db,
  executionId: string,
): Promise<WorkflowExecutionRow | undefined> {
  if (!isUuid(executionId)) return undefined;
  return db
    .selectFrom('workflowExecution')
    .selectAll()
    .where('id', '=', executionId)
    .executeTakeFirst();
}

/** The execution run by a Temporal workflow id. */
export async function findByTemporalWorkflowId(
  db: Db,
  temporalWorkflowId: string,
): Promise<WorkflowExecutionRow | undefined> {
  return db
    .selectFrom('workflowExecution')
    .selectAll()
    .where('temporalWorkflowId', '=', temporalWorkflowId)
    .executeTakeFirst();
}

export type ExecutionSummary = Pick<
  WorkflowExecutionRow,
  'id' | 'status' | 'executionStart' | 'executionEnd'
>;

/** A workflow's executions, newest first, optionally of one status. */
export async function list(
  db: Db,
  workflowId: string,
  options: { status?: ExecutionStatus; page?: Page } = {},
): Promise<Paged<ExecutionSummary>> {
  let query = db
    .selectFrom('workflowExecution')
    .select(['id', 'status', 'executionStart', 'executionEnd'])
    .where('workflowId', '=', workflowId);
  if (options.status) query = query.where('status', '=', options.status);
  return paginate(query.orderBy('executionStart', 'desc').orderBy('id', 'desc'), options.page);
}

/** Whether a workflow has executions that have not finished. */
export async function hasActiveExecutions(db: Db, workflowId: string): Promise<boolean> {
  const row = await db
    .selectFrom('workflowExecution')
    .select('id')
    .where('workflowId', '=', workflowId)
    .where('status', 'in', ACTIVE_EXECUTION)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Dedupe key of the entry a run logs once it has prepared its execution: the mark that a
 * Temporal run took the execution on (recovery restarts only executions without it). The
 * worker's `prepareExecution` writes it.
 */
export const executionPreparedLogKey = 'engine:started';

/** An active execution as recovery sees it. */
export type ActiveExecution = Pick<
  WorkflowExecutionRow,
  'id' | 'workflowId' | 'workflowName' | 'temporalWorkflowId' | 'status' | 'executionStart'
>;

/** Where a scan of active executions stopped: the last row's start time and id. */
export interface ExecutionCursor {
  executionStart: Date;
  id: string;
}

/**
 * Active executions, oldest first (after `after`, started in [`startedFrom`, `startedBefore`)):
 * those a run has prepared (`prepared: true`), or those no run has touched yet.
 */
export async function listActiveExecutions(
  db: Db,
  options: {
    prepared: boolean;
    startedBefore?: Date;
    startedFrom?: Date;
    after?: ExecutionCursor;
    limit: number;
  },
): Promise<ActiveExecution[]> {
  const { after, startedBefore, startedFrom } = options;
  return db
    .selectFrom('workflowExecution as e')
    .select([
      'e.id',
      'e.workflowId',
      'e.workflowName',
      'e.temporalWorkflowId',
      'e.status',
      'e.executionStart',
    ])
    .where('e.status', 'in', ACTIVE_EXECUTION)
    .$if(startedBefore !== undefined, (query) =>
      query.where('e.executionStart', '<', startedBefore!),
    )
    .$if(startedFrom !== undefined, (query) => query.where('e.executionStart', '>=', startedFrom!))
    .$if(after !== undefined, (query) =>
      query.where((eb) =>
        eb(
          eb.refTuple('e.executionStart', 'e.id'),
          '>',
          eb.tuple(after!.executionStart, after!.id),
        ),
      ),
    )
    .where((eb) => {
      const prepared = eb.exists(
        eb
          .selectFrom('logEntry as l')
          .select(sql<number>`1`.as('one'))
          .whereRef('l.executionId', '=', 'e.id')
          .where('l.dedupeKey', '=', executionPreparedLogKey),
      );
      return options.prepared ? prepared : eb.not(prepared);
    })
    .orderBy('e.executionStart')
    .orderBy('e.id')
    .limit(options.limit)
    .execute();
}

/**
 * Ends an execution whose Temporal run is gone without writing its outcome: the execution gets
 * `outcome` (with a log entry saying why) and every unfinished task is Canceled. Returns whether
 * anything changed: an execution that finished meanwhile keeps its own outcome.
 */
export async function finishAbandonedExecution(
  db: Kysely<Database>,
  executionId: string,
  outcome: { status: Extract<ExecutionStatus, 'Failed' | 'Canceled'>; message: string; at: Date },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const finished = await trx
      .updateTable('workflowExecution')
      .set({ status: outcome.status, message: outcome.message, executionEnd: outcome.at })
      .where('id', '=', executionId)
      .where('status', 'in', ACTIVE_EXECUTION)
      .returning('id')
      .executeTakeFirst();
    if (!finished) return false;
    await trx
      .updateTable('taskExecution')
      .set({
        status: 'Canceled',
        message: outcome.message,
        startTime: sql<Date>`coalesce(start_time, ${outcome.at})`,
        endTime: sql<Date>`coalesce(end_time, ${outcome.at})`,
      })
      .where('executionId', '=', executionId)
      .where('status', 'not in', FINISHED_TASK)
      .execute();
    await appendLogs(trx, [
      {
        executionId,
        taskExecutionId: null,
        dedupeKey: 'recovery:abandoned',
        level: 'Error',
        message: outcome.message,
        timeStamp: outcome.at,
      },
    ]);
    return true;
  });
}

/** Running (from Pending or Paused), with log entries. A finished execution stays finished. */
export async function markExecutionRunning(
  db: Kysely<Database>,
  executionId: string,
  logs: NewLogEntry[] = [],
): Promise<void> {
  await changeExecution(db, executionId, ['Pending', 'Paused'], { status: 'Running' }, logs);
}

/** Paused (only a person can move the run on), with log entries. */
export async function markExecutionPaused(
  db: Kysely<Database>,
  executionId: string,
  logs: NewLogEntry[] = [],
): Promise<void> {
  await changeExecution(db, executionId, ['Pending', 'Running'], { status: 'Paused' }, logs);
}

/**
 * Finished with its final status, message and end time, with log entries; a no-op once
 * finished, so the first final status written wins.
 */
export async function markExecutionFinished(
  db: Kysely<Database>,
  executionId: string,
  outcome: {
    status: Extract<ExecutionStatus, 'Completed' | 'Failed' | 'Canceled'>;
    message: string;
    at?: Date;
  },
  logs: NewLogEntry[] = [],
): Promise<void> {
  const change = {
    status: outcome.status,
    message: outcome.message,
    executionEnd: outcome.at ?? new Date(),
  };
  await changeExecution(db, executionId, ACTIVE_EXECUTION, change, logs);
}

/** Writes `change` to an execution whose status is one of `from`, with its log entries. */
async function changeExecution(
  db: Kysely<Database>,
  executionId: string,
  from: ExecutionStatus[],
  change: Updateable<WorkflowExecutionTable>,
  logs: NewLogEntry[],
): Promise<void> {
  const update = db
    .updateTable('workflowExecution')
    .set(change)
    .where('id', '=', executionId)
    .where('status', 'in', from);
  await withLogs(db, update, logs);
}

// ---------------------------------------------------------------------------------------------
// Tasks
// ---------------------------------------------------------------------------------------------

export type TaskSummary = Omit<TaskExecutionRow, 'output'>;

const taskColumns = [
  'id',
  'executionId',
  'workflowId',
  'name',
  'position',
  'status',
  'message',
  'attempts',
  'startTime',
  'endTime',
] as const;

/** An execution's tasks in definition order. */
export async function listTasks(
  db: Db,
  executionId: string,
  page?: Page,
): Promise<Paged<TaskSummary>> {
  const query = db
    .selectFrom('taskExecution')
    .select(taskColumns)
    .where('executionId', '=', executionId)
    .orderBy('position');
  return paginate(query, page);
}

/** One task of an execution; undefined when unknown or of another execution. */
export async function findTask(
  db: Db,
  executionId: string,
  taskExecutionId: string,
): Promise<TaskSummary | undefined> {
  if (!isUuid(taskExecutionId)) return undefined;
  return db
    .selectFrom('taskExecution')
    .select(taskColumns)
    .where('id', '=', taskExecutionId)
    .where('executionId', '=', executionId)
    .executeTakeFirst();
}

/** Task name → task execution id, for one execution. */
export async function taskIds(db: Db, executionId: string): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('taskExecution')
    .select(['id', 'name'])
    .where('executionId', '=', executionId)
    .execute();
  return new Map(rows.map((row) => [row.name, row.id]));
}

/** The outputs of the named tasks that completed (others are absent). */
export async function taskOutputs(
  db: Db,
  executionId: string,
  names: string[],
): Promise<Record<string, unknown>> {
  if (names.length === 0) return {};
  const rows = await db
    .selectFrom('taskExecution')
    .select(['name', 'output'])
    .where('executionId', '=', executionId)
    .where('name', 'in', names)
    .where('status', '=', 'Completed')
    .execute();
  return Object.fromEntries(rows.map((row) => [row.name, row.output ?? null]));
}

/**
 * Attempt `attempt` of a task started. Keyed by attempt: an older attempt's late write never
 * overwrites a newer one, and a finished task is never reopened.
 */
export async function markTaskRunning(
  db: Db,
  task: { id: string; attempt: number; at: Date },
): Promise<void> {
  await db
    .updateTable('taskExecution')
    .set({
      status: 'Running',
      attempts: task.attempt,
      message: '',
      startTime: sql<Date>`coalesce(start_time, ${task.at})`,
    })
    .where('id', '=', task.id)
    .where('attempts', '<=', task.attempt)
    .where('status', 'not in', FINISHED_TASK)
    .execute();
}

export interface AttemptOutcome {
  id: string;
  attempt: number;
  status: Extract<TaskStatus, 'Completed' | 'Failed' | 'Skipped' | 'Retrying' | 'Canceled'>;
  message: string;
  /** When the outcome happened (the end time, unless Retrying). */
  at: Date;
  /** When the attempt started; the task's start time unless an earlier attempt set it. */
  startedAt?: Date;
  /** Completed only: the plugin's output, kept for later tasks' expressions. */
  output?: unknown;
}

/**
 * The outcome of one attempt, with its log entries, in one round trip. Retrying leaves the end
 * time empty; the others finish the task. Keyed by attempt like `markTaskRunning`.
 */
export async function recordAttempt(
  db: Kysely<Database>,
  outcome: AttemptOutcome,
  logs: NewLogEntry[],
): Promise<void> {
  const finished = outcome.status !== 'Retrying';
  const update = db
    .updateTable('taskExecution')
    .set({
      status: outcome.status,
      message: outcome.message,
      attempts: sql<number>`greatest(attempts, ${outcome.attempt})`,
      startTime: sql<Date>`coalesce(start_time, ${outcome.startedAt ?? outcome.at})`,
      endTime: finished ? outcome.at : null,
      ...(outcome.output !== undefined ? { output: JSON.stringify(outcome.output) } : {}),
    })
    .where('id', '=', outcome.id)
    .where('attempts', '<=', outcome.attempt)
    .where('status', 'not in', FINISHED_TASK);
  await withLogs(db, update, logs);
}

export interface TaskTransition {
  id: string;
  status: Extract<TaskStatus, 'WaitingForApproval' | 'Skipped' | 'Failed' | 'Canceled'>;
  message: string;
}

/**
 * Engine decisions about tasks that are not running (skipped, rejected, canceled, waiting for a
 * person). A finished task keeps its status. Times: a finished task gets its end time (and its
 * start time, when it never started), so the API never shows a finished task without times.
 */
export async function applyTaskTransitions(
  db: Db,
  transitions: TaskTransition[],
  at: Date,
): Promise<void> {
  // One statement per chunk however many tasks (a failure near the root of a big DAG skips
  // thousands at once): the new values join the table as a VALUES list.
  for (let start = 0; start < transitions.length; start += 5000) {
    const rows = transitions
      .slice(start, start + 5000)
      .map(
        (transition) => sql`(${transition.id}::uuid, ${transition.status}, ${transition.message})`,
      );
    const finished = sql`v.status <> 'WaitingForApproval'`;
    await sql`
      update task_execution as t
      set status = v.status,
          message = v.message,
          start_time = case when ${finished} then coalesce(t.start_time, ${at}) else t.start_time end,
          end_time = case when ${finished} then coalesce(t.end_time, ${at}) else t.end_time end
      from (values ${sql.join(rows)}) as v(id, status, message)
      where t.id = v.id and t.status not in (${sql.join(FINISHED_TASK)})
    `.execute(db);
  }
}

// ---------------------------------------------------------------------------------------------
// Approvals
// ---------------------------------------------------------------------------------------------

/** Asks for an approval of a task; idempotent: the task's existing approval is returned. */
export async function createApproval(
  db: Db,
  input: {
    executionId: string;
    taskExecutionId: string;
    taskName: string;
    comment: string;
    at?: Date;
  },
): Promise<ApprovalRow> {
  const inserted = await db
    .insertInto('approval')
    .values({
      id: newId(),
      executionId: input.executionId,
      taskExecutionId: input.taskExecutionId,
      taskName: input.taskName,
      comment: input.comment,
      status: 'Pending',
      requestedAt: input.at ?? new Date(),
    })
    .onConflict((oc) => oc.column('taskExecutionId').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return inserted;
  return db
    .selectFrom('approval')
    .selectAll()
    .where('taskExecutionId', '=', input.taskExecutionId)
    .executeTakeFirstOrThrow();
}

/** An execution's approvals, oldest first. */
export async function listApprovals(
  db: Db,
  executionId: string,
  page?: Page,
): Promise<Paged<ApprovalRow>> {
  const query = db
    .selectFrom('approval')
    .selectAll()
    .where('executionId', '=', executionId)
    .orderBy('requestedAt')
    .orderBy('id');
  return paginate(query, page);
}

/**
 * Records a decision exactly once: only a Pending approval changes. `NotFound` when the approval
 * is not one of the execution's; `Conflict` when it was decided already.
 */
export async function decideApproval(
  db: Db,
  input: {
    executionId: string;
    approvalId: string;
    decision: Exclude<ApprovalStatus, 'Pending'>;
    decidedBy: string;
    at?: Date;
  },
): Promise<ApprovalRow> {
  const missing = () =>
    new NotFound(`Approval ${input.approvalId} was not found in execution ${input.executionId}.`);
  if (!isUuid(input.approvalId)) throw missing();
  const decided = await db
    .updateTable('approval')
    .set({ status: input.decision, decidedBy: input.decidedBy, decidedAt: input.at ?? new Date() })
    .where('id', '=', input.approvalId)
    .where('executionId', '=', input.executionId)
    .where('status', '=', 'Pending')
    .returningAll()
    .executeTakeFirst();
  if (decided) return decided;
  const existing = await findApproval(db, input.executionId, input.approvalId);
  if (!existing) throw missing();
  throw alreadyDecided(existing);
}

/** An approval of an execution; undefined when unknown or another execution's. */
export async function findApproval(
  db: Db,
  executionId: string,
  approvalId: string,
): Promise<ApprovalRow | undefined> {
  if (!isUuid(approvalId)) return undefined;
  return db
    .selectFrom('approval')
    .selectAll()
    .where('id', '=', approvalId)
    .where('executionId', '=', executionId)
    .executeTakeFirst();
}

/** The `Conflict` of deciding an approval that was decided already. */
export function alreadyDecided(approval: Pick<ApprovalRow, 'id' | 'status'>) {
  return new Conflict(`Approval ${approval.id} was already ${approval.status.toLowerCase()}.`);
}

/** Puts a decision back to Pending (the decision could not be delivered to the run). */
export async function undoApprovalDecision(db: Db, approvalId: string): Promise<void> {
  await db
    .updateTable('approval')
    .set({ status: 'Pending', decidedBy: null, decidedAt: null })
    .where('id', '=', approvalId)
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Logs
// ---------------------------------------------------------------------------------------------

export interface NewLogEntry {
  executionId: string;
  /** null for the execution's own entries. */
  taskExecutionId: string | null;
  /** Deterministic per entry, unique per execution: writing it twice inserts it once. */
  dedupeKey: string;
  level: LogLevel;
  message: string;
  exception?: string | null;
  timeStamp: Date;
}

function logValues(entry: NewLogEntry) {
  return {
    id: newId(),
    executionId: entry.executionId,
    taskExecutionId: entry.taskExecutionId,
    dedupeKey: entry.dedupeKey,
    level: entry.level,
    message: entry.message,
    exception: entry.exception ?? null,
    timeStamp: entry.timeStamp,
  };
}

/**
 * Runs a status change and inserts its log entries in one statement (the change as a
 * data-modifying CTE), so a transition and the entries saying why land together, in one round
 * trip. Entries already written (same dedupe key) are skipped.
 */
async function withLogs<T extends keyof Database>(
  db: Kysely<Database>,
  change: UpdateQueryBuilder<Database, T, T, UpdateResult>,
  logs: NewLogEntry[],
): Promise<void> {
  if (logs.length === 0) {
    await change.execute();
    return;
  }
  await db
    .with('change', () => change.returning(sql<string>`1`.as('changed')))
    .insertInto('logEntry')
    .values(logs.map(logValues))
    .onConflict((oc) => oc.columns(['executionId', 'dedupeKey']).doNothing())
    .execute();
}

/** Appends log entries in batches; entries already written (same dedupe key) are skipped. */
export async function appendLogs(db: Db, entries: NewLogEntry[]): Promise<void> {
  // 8 parameters a row: stay well under PostgreSQL's 65535 bind parameters per statement.
  for (let start = 0; start < entries.length; start += 5000) {
    await db
      .insertInto('logEntry')
      .values(entries.slice(start, start + 5000).map(logValues))
      .onConflict((oc) => oc.columns(['executionId', 'dedupeKey']).doNothing())
      .execute();
  }
}

export type LogEntryView = Pick<
  LogEntryRow,
  'id' | 'message' | 'level' | 'timeStamp' | 'exception'
>;

/** An execution's own log entries (not its tasks'), oldest first. */
export async function listExecutionLogs(
  db: Db,
  executionId: string,
  page?: Page,
): Promise<Paged<LogEntryView>> {
  const query = db
    .selectFrom('logEntry')
    .select(['id', 'message', 'level', 'timeStamp', 'exception'])
    .where('executionId', '=', executionId)
    .where('taskExecutionId', 'is', null)
    .orderBy('seq');
  return paginate(query, page);
}

/** One task's log entries, oldest first. */
export async function listTaskLogs(
  db: Db,
  taskExecutionId: string,
  page?: Page,
): Promise<Paged<LogEntryView>> {
  const query = db
    .selectFrom('logEntry')
    .select(['id', 'message', 'level', 'timeStamp', 'exception'])
    .where('taskExecutionId', '=', taskExecutionId)
    .orderBy('seq');
  return paginate(query, page);
}
