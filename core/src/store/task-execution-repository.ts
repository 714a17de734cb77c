import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isUuid, newId } from './ids.js';
import { withLogs, type NewLogEntry } from './log-repository.js';
import { paginate, type Page, type Paged } from './paging.js';
import { storableJson, storableText } from '#definition/storable-text.js';
import type { Database, TaskDryRunPlan, TaskExecutionRow, TaskStatus } from './tables.js';

/**
 * The tasks of executions, one row per task of the definition. Status writes are keyed by task
 * and attempt, so a retried activity or a replayed workflow writing again moves nothing
 * backwards, and a finished task is never reopened. Messages and outputs carry what plugins
 * produced: characters PostgreSQL cannot store are written as U+FFFD (see storable-text.ts).
 */

const FINISHED_TASK: TaskStatus[] = ['Completed', 'Failed', 'Skipped', 'Canceled'];

/** PostgreSQL takes at most 65535 bind parameters per statement: large writes go in chunks. */
const CHUNK = 5000;

/** Tasks a rerun does not run again: their outputs by name, and what their rows say. */
export interface ReusedTasks {
  outputs: ReadonlyMap<string, unknown>;
  message: string;
  at: Date;
}

/** The columns `pendingTaskRows` gives, in its order. */
export const pendingTaskColumns = [
  'id',
  'executionId',
  'workflowId',
  'name',
  'position',
  'status',
  'message',
  'startTime',
  'endTime',
  'output',
] as const;

/**
 * A new execution's task rows, one per name in definition order: Pending, or Completed with the
 * output a rerun reuses, with the ids given (else new ones). For an insert in the statement that inserts the execution (a CTE named
 * `inserted`, which gives the execution's ids): the rows travel as one JSON parameter, however
 * many tasks there are, and are written only when the execution was.
 */
export function pendingTaskRows(
  taskNames: string[],
  reused?: ReusedTasks,
  ids?: ReadonlyMap<string, string>,
): RawBuilder<unknown> {
  const rows = taskNames.map((name, position) => {
    const row = { id: ids?.get(name) ?? newId(), name, position };
    return reused?.outputs.has(name)
      ? {
          ...row,
          status: 'Completed',
          message: reused.message,
          start_time: reused.at.toISOString(),
          end_time: reused.at.toISOString(),
          output: reused.outputs.get(name) ?? null,
        }
      : { ...row, status: 'Pending', message: '' };
  });
  return sql`select t.id, i.id, i.workflow_id, t.name, t.position, t.status, t.message,
      t.start_time, t.end_time, t.output
    from inserted i
    cross join jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as t(id uuid, name text,
      position integer, status text, message text, start_time timestamptz, end_time timestamptz,
      output jsonb)`;
}

/** Cancels every unfinished task of an execution, giving each its start and end time. */
export async function cancelUnfinishedTasks(
  db: Kysely<Database>,
  executionId: string,
  reason: { message: string; at: Date },
): Promise<void> {
  await db
    .updateTable('taskExecution')
    .set({
      status: 'Canceled',
      message: storableText(reason.message),
      startTime: sql<Date>`coalesce(start_time, ${reason.at})`,
      endTime: sql<Date>`coalesce(end_time, ${reason.at})`,
    })
    .where('executionId', '=', executionId)
    .where('status', 'not in', FINISHED_TASK)
    .execute();
}

/** Columns only the engine reads: the writer of a reset run, a forEach item's own fields. */
type EngineColumns = 'temporalRunId' | 'foreachTaskId' | 'itemIndex' | 'item' | 'attemptStartTime';

export type TaskSummary = Omit<TaskExecutionRow, 'output' | EngineColumns>;

const taskColumns = [
  'id',
  'executionId',
  'workflowId',
  'name',
  'position',
  'status',
  'message',
  'attempts',
  'interruptedAttempts',
  'startTime',
  'endTime',
  'dryRun',
] as const;

/** An execution's tasks in definition order, each forEach task's items right after it. */
export async function listTasks(
  db: Kysely<Database>,
  executionId: string,
  page?: Page,
): Promise<Paged<TaskSummary>> {
  const query = db
    .selectFrom('taskExecution')
    .select(taskColumns)
    .where('executionId', '=', executionId)
    .orderBy('position')
    .orderBy(sql`item_index nulls first`);
  return paginate(query, page);
}

/** One task of an execution, with its output; undefined when unknown or of another execution. */
export async function findTask(
  db: Kysely<Database>,
  executionId: string,
  taskExecutionId: string,
): Promise<Omit<TaskExecutionRow, EngineColumns> | undefined> {
  if (!isUuid(taskExecutionId)) return undefined;
  return db
    .selectFrom('taskExecution')
    .select([...taskColumns, 'output'])
    .where('id', '=', taskExecutionId)
    .where('executionId', '=', executionId)
    .executeTakeFirst();
}

/** The outputs of an execution's completed tasks, by task name. */
export async function completedOutputs(
  db: Kysely<Database>,
  executionId: string,
): Promise<Map<string, unknown>> {
  const rows = await db
    .selectFrom('taskExecution')
    .select(['name', 'output'])
    .where('executionId', '=', executionId)
    .where('status', '=', 'Completed')
    .execute();
  return new Map(rows.map((row) => [row.name, row.output ?? null]));
}

/** An execution's tasks (not a forEach task's items) with how each ended and its output, in definition order. */
export async function taskOutcomes(
  db: Kysely<Database>,
  executionId: string,
): Promise<{ name: string; status: TaskStatus; output: unknown }[]> {
  const rows = await db
    .selectFrom('taskExecution')
    .select(['name', 'status', 'output'])
    .where('executionId', '=', executionId)
    .where('foreachTaskId', 'is', null)
    .orderBy('position')
    .execute();
  return rows.map((row) => ({ name: row.name, status: row.status, output: row.output ?? null }));
}

/** An execution's tasks as a run starts: each task's row id, and which are Completed already. */
export interface TaskRoster {
  /** Task name → task execution id. */
  ids: Map<string, string>;
  /** A rerun's reused tasks: Completed before the run starts. */
  completed: Set<string>;
}

/** One task row as `rosterOf` reads it. */
export interface RosterEntry {
  id: string;
  name: string;
  status: TaskStatus;
}

export function rosterOf(entries: readonly RosterEntry[]): TaskRoster {
  return {
    ids: new Map(entries.map((entry) => [entry.name, entry.id])),
    completed: new Set(
      entries.filter((entry) => entry.status === 'Completed').map((entry) => entry.name),
    ),
  };
}

/**
 * The roster's rows of one execution as one JSON array, for a query on `workflow_execution` to
 * read beside the execution (`findExecutionForRun`): one round trip instead of two more.
 */
export const rosterColumn = sql<RosterEntry[]>`coalesce((
  select json_agg(json_build_object('id', t.id, 'name', t.name, 'status', t.status))
  from task_execution t where t.execution_id = workflow_execution.id), '[]'::json)`;

/** An execution's task roster, in one query. */
export async function taskRoster(db: Kysely<Database>, executionId: string): Promise<TaskRoster> {
  const rows = await db
    .selectFrom('taskExecution')
    .select(['id', 'name', 'status'])
    .where('executionId', '=', executionId)
    .execute();
  return rosterOf(rows);
}

/** Task name → task execution id, for one execution. */
export async function taskIds(
  db: Kysely<Database>,
  executionId: string,
): Promise<Map<string, string>> {
  return (await taskRoster(db, executionId)).ids;
}

/** The outputs of the named tasks that completed (others are absent). */
export async function taskOutputs(
  db: Kysely<Database>,
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
 * Which run writes a task (see `RunWriter` in execution-repository.ts): `undefined` for the
 * execution's first run, or a reset run's id.
 */
export type TaskWriter = string | undefined;

/**
 * The rows a write may change, and whether it starts a row afresh. The first run writes rows no
 * reset run took over, by the usual rules (`ordinary`); a reset run also takes over the rows an
 * earlier run wrote, starting them afresh (`fresh`: true for those).
 */
function taskWrite(run: TaskWriter, ordinary: RawBuilder<unknown>, table = 'task_execution') {
  const column = sql.ref(`${table}.temporal_run_id`);
  if (run === undefined) {
    return { where: sql<boolean>`(${ordinary} and ${column} is null)`, fresh: sql<boolean>`false` };
  }
  const fresh = sql<boolean>`(${column} is distinct from ${run})`;
  return { where: sql<boolean>`(${fresh} or ${ordinary})`, fresh };
}

/**
 * Sets every task of the execution back to Pending for a run reset to its start, except those
 * a rerun took over (Completed without an attempt): that run runs them all again.
 */
export async function reopenTasks(
  db: Kysely<Database>,
  executionId: string,
  run: string,
): Promise<void> {
  await db
    .updateTable('taskExecution')
    .set({
      status: 'Pending',
      message: '',
      attempts: 0,
      interruptedAttempts: 0,
      attemptStartTime: null,
      startTime: null,
      endTime: null,
      output: null,
      temporalRunId: run,
    })
    .where('executionId', '=', executionId)
    .where((eb) => eb.not(eb.and([eb('status', '=', 'Completed'), eb('attempts', '=', 0)])))
    .execute();
}

/**
 * An earlier run of the same attempt that `markTaskRunning` found cut short: the row was
 * Running in that attempt, from a start before this run's (its worker stopped or died).
 */
export interface InterruptedRun {
  /** When the interrupted run began. */
  startedAt: Date;
  /** Interrupted runs of the task before it (0 for the first). */
  before: number;
}

/** What `markTaskRunning` found: how many runs of the task were interrupted, this one's find included. */
export interface RunningMarked {
  interruptedAttempts: number;
  interrupted?: InterruptedRun;
}

/**
 * Attempt `attempt` of a task started. Keyed by attempt: an older attempt's late write never
 * overwrites a newer one, and a finished task is never reopened (except by a reset run). The
 * same write finds an earlier run of this attempt that was cut short (the row Running in it
 * since before `at`) and counts it, so the normal path pays no read for it; undefined when the
 * write changed nothing.
 */
export async function markTaskRunning(
  db: Kysely<Database>,
  task: {
    id: string;
    attempt: number;
    at: Date;
    run?: TaskWriter;
    /** Look for an interrupted earlier run (a plugin's attempt; not a forEach's or subworkflow's start). */
    findInterrupted?: boolean;
  },
): Promise<RunningMarked | undefined> {
  const write = taskWrite(
    task.run,
    sql`(task_execution.attempts <= ${task.attempt} and task_execution.status not in (${sql.join(FINISHED_TASK)}))`,
  );
  const before = db
    .selectFrom('taskExecution')
    .select([
      'id as beforeId',
      'status as beforeStatus',
      'attempts as beforeAttempts',
      'attemptStartTime as beforeAttemptStart',
      'interruptedAttempts as beforeInterrupted',
      'temporalRunId as beforeRun',
    ])
    .where('id', '=', task.id)
    .forUpdate()
    .as('before');
  const interrupted = sql<boolean>`(${task.findInterrupted === true}::boolean
    and before.before_status = 'Running'
    and before.before_attempts = ${task.attempt}
    and before.before_attempt_start < ${task.at}
    and before.before_run is not distinct from ${task.run ?? null}::text)`;
  const row = await db
    .updateTable('taskExecution')
    .from(before)
    .set({
      status: 'Running',
      attempts: task.attempt,
      message: '',
      startTime: sql<Date>`case when ${write.fresh} then ${task.at} else coalesce(start_time, ${task.at}) end`,
      attemptStartTime: task.at,
      interruptedAttempts: sql<number>`case when ${write.fresh} then 0
        when ${interrupted} then interrupted_attempts + 1 else interrupted_attempts end`,
      ...(task.run !== undefined ? { endTime: null, output: null, temporalRunId: task.run } : {}),
    })
    .whereRef('taskExecution.id', '=', 'before.beforeId')
    .where(write.where)
    .returning([
      'taskExecution.interruptedAttempts',
      'before.beforeInterrupted',
      'before.beforeAttemptStart',
      sql<boolean>`${interrupted}`.as('foundInterrupted'),
    ])
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    interruptedAttempts: row.interruptedAttempts,
    ...(row.foundInterrupted && row.beforeAttemptStart
      ? { interrupted: { startedAt: row.beforeAttemptStart, before: row.beforeInterrupted } }
      : {}),
  };
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
  /** A dry run's task: what it did, merged into what the task's plan holds (its approval). */
  dryRun?: TaskDryRunPlan;
  run?: TaskWriter;
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
  await withLogs(db, attemptChange(db, outcome), logs);
}

/** What `attemptChange` gives. */
export type AttemptChange = ReturnType<typeof attemptChange>;

/** The update `recordAttempt` makes, for a statement that writes more with it. */
export function attemptChange(db: Kysely<Database>, outcome: AttemptOutcome) {
  const finished = outcome.status !== 'Retrying';
  const started = outcome.startedAt ?? outcome.at;
  const write = taskWrite(
    outcome.run,
    sql`(task_execution.attempts <= ${outcome.attempt} and task_execution.status not in (${sql.join(FINISHED_TASK)}))`,
  );
  return db
    .updateTable('taskExecution')
    .set({
      status: outcome.status,
      message: storableText(outcome.message),
      attempts: sql<number>`case when ${write.fresh} then ${outcome.attempt} else greatest(attempts, ${outcome.attempt}) end`,
      startTime: sql<Date>`case when ${write.fresh} then ${started} else coalesce(start_time, ${started}) end`,
      attemptStartTime: started,
      ...(outcome.run !== undefined
        ? {
            interruptedAttempts: sql<number>`case when ${write.fresh} then 0 else interrupted_attempts end`,
          }
        : {}),
      endTime: finished ? outcome.at : null,
      ...(outcome.output !== undefined
        ? { output: storableJson(outcome.output) }
        : outcome.run !== undefined
          ? { output: sql`case when ${write.fresh} then null else output end` }
          : {}),
      ...(outcome.run !== undefined ? { temporalRunId: outcome.run } : {}),
      ...(outcome.dryRun !== undefined ? { dryRun: mergedPlan(outcome.dryRun) } : {}),
    })
    .where('id', '=', outcome.id)
    .where(write.where);
}

/** A dry run task's plan with these fields set (the others kept). */
const mergedPlan = (plan: TaskDryRunPlan) =>
  sql<string>`coalesce(dry_run, '{}'::jsonb) || ${storableJson(plan)}::jsonb`;

/** Notes on a dry run's task the approval it would have waited for (approved at once). */
export async function noteDryRunApproval(
  db: Kysely<Database>,
  taskExecutionId: string,
  approval: NonNullable<TaskDryRunPlan['approval']>,
): Promise<void> {
  await db
    .updateTable('taskExecution')
    .set({ dryRun: mergedPlan({ approval }) })
    .where('id', '=', taskExecutionId)
    .execute();
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
  db: Kysely<Database>,
  transitions: TaskTransition[],
  at: Date,
  run?: TaskWriter,
): Promise<void> {
  const write = taskWrite(run, sql`(t.status not in (${sql.join(FINISHED_TASK)}))`, 't');
  // One statement per chunk however many tasks (a failure near the root of a big DAG skips
  // thousands at once): the new values join the table as a VALUES list.
  for (let start = 0; start < transitions.length; start += CHUNK) {
    const rows = transitions
      .slice(start, start + CHUNK)
      .map(
        (transition) =>
          sql`(${transition.id}::uuid, ${transition.status}, ${storableText(transition.message)})`,
      );
    const finished = sql`v.status <> 'WaitingForApproval'`;
    const fresh = write.fresh;
    await sql`
      update task_execution as t
      set status = v.status,
          message = v.message,
          start_time = case when ${finished} then (case when ${fresh} then ${at} else coalesce(t.start_time, ${at}) end)
                            else (case when ${fresh} then null else t.start_time end) end,
          end_time = case when ${finished} then (case when ${fresh} then ${at} else coalesce(t.end_time, ${at}) end)
                          else (case when ${fresh} then null else t.end_time end) end,
          attempts = case when ${fresh} then 0 else t.attempts end,
          output = case when ${fresh} then null else t.output end,
          temporal_run_id = ${run ?? null}::text
      from (values ${sql.join(rows)}) as v(id, status, message)
      where t.id = v.id and ${write.where}
    `.execute(db);
  }
}

/**
 * The output a task (or one item of a forEach task) completed with in the workflow's latest
 * completed real (not dry) execution, with that execution's id; undefined when there is none or
 * the task did not complete in it.
 */
export async function recordedOutput(
  db: Kysely<Database>,
  workflowId: string,
  taskName: string,
  itemIndex?: number,
): Promise<{ executionId: string; output: unknown } | undefined> {
  const latest = await db
    .selectFrom('workflowExecution')
    .select('id')
    .where('workflowId', '=', workflowId)
    .where('status', '=', 'Completed')
    .where('dryRun', '=', false)
    .orderBy('executionStart', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!latest) return undefined;
  let query = db
    .selectFrom('taskExecution as task')
    .select('task.output')
    .where('task.executionId', '=', latest.id)
    .where('task.status', '=', 'Completed');
  query =
    itemIndex === undefined
      ? query.where('task.name', '=', taskName).where('task.foreachTaskId', 'is', null)
      : query
          .innerJoin('taskExecution as parent', 'parent.id', 'task.foreachTaskId')
          .where('parent.name', '=', taskName)
          .where('task.itemIndex', '=', itemIndex);
  const row = await query.executeTakeFirst();
  return row ? { executionId: latest.id, output: row.output ?? null } : undefined;
}
