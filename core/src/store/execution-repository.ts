import { sql, type Kysely, type QueryCreator, type Updateable, type WhereInterface } from 'kysely';
import { newId, isUuid } from './ids.js';
import { Invalid } from '#definition/errors.js';
import { problemAt } from '#definition/validation/problem.js';
import { cancelPendingApprovals, closedApproval } from './approval-repository.js';
import { appendLogs, logValues, withLogsReturning, type NewLogEntry } from './log-repository.js';
import { keysetPage, paginate, type Paged, type Slice } from './paging.js';
import { preparedQuery } from './prepared.js';
import type {
  Database,
  ExecutionStatus,
  WorkflowExecutionRow,
  WorkflowExecutionTable,
} from './tables.js';
import { storableText } from '#definition/storable-text.js';
import { executionStartedLogKey } from '#protocol/messages.js';
import {
  cancelUnfinishedTasks,
  pendingTaskColumns,
  pendingTaskRows,
  reopenTasks,
  rosterColumn,
  rosterOf,
  type ReusedTasks,
  type TaskRoster,
  type AttemptChange,
} from './task-execution-repository.js';

/**
 * Executions, the root of their tasks, approvals and logs (each kept by its own repository).
 * Every write the engine makes is idempotent: a retried activity or a replayed workflow writes
 * the same values again (status writes only move an execution forward), so nothing is
 * duplicated and nothing moves backwards.
 */

const ACTIVE_EXECUTION: ExecutionStatus[] = ['Pending', 'Running', 'Paused'];

/** Whether an execution can still change (and so be canceled). */
export function isExecutionActive(status: ExecutionStatus): boolean {
  return ACTIVE_EXECUTION.includes(status);
}

export interface NewExecution {
  id?: string;
  /**
   * Its workflow's project (the database refuses any other); absent: `default`, as for rows
   * written before projects.
   */
  projectId?: string;
  workflowId: string;
  workflowName: string;
  /** The definition text, snapshotted. */
  definition: string;
  /** Task names in definition order; empty for an execution that failed before it could run. */
  taskNames: string[];
  triggerId?: string | null;
  temporalWorkflowId: string;
  /** The run's resolved inputs; none when absent. */
  inputs?: Record<string, unknown>;
  /** The workflow revision `definition` is; null (the default) when unknown. */
  revision?: number | null;
  /** The execution this one reruns, and the tasks it takes over from it. */
  rerun?: { of: string; reused: ReusedTasks };
  /** The execution and task that start this one as a subworkflow. */
  parent?: { executionId: string; taskExecutionId: string; taskName: string };
  /** The user who started the run; none for scheduled and webhook runs. */
  startedBy?: string | null;
  /** The Temporal namespace of its run; null or absent: `Temporal.Namespace`. */
  temporalNamespace?: string | null;
  /** A dry run, the outputs its request gives tasks by name, and the test case it runs. */
  dryRun?: { mocks?: Record<string, unknown>; testCase?: string };
  status: ExecutionStatus;
  message?: string;
  executionStart?: Date;
  executionEnd?: Date | null;
}

/** An execution created (with its task rows' ids by task name), or found already there. */
export type CreatedExecution =
  | { execution: WorkflowExecutionRow; created: true; taskIds: ReadonlyMap<string, string> }
  | { execution: WorkflowExecutionRow; created: false };

/**
 * Creates an execution and its task rows (Pending) in one transaction (the caller's, when `db`
 * is one). Keyed by the Temporal workflow id: when a row for it exists already (a retried
 * schedule fire), nothing is written and the existing execution is returned with
 * `created: false`.
 */
export async function createExecutionWithTasks(
  db: Kysely<Database>,
  input: NewExecution,
): Promise<CreatedExecution> {
  // One statement: the execution, and its task rows only when it was inserted (a retried
  // schedule's start finds it there instead). One round trip, where a transaction took four.
  const taskIds = new Map(input.taskNames.map((name) => [name, newId()]));
  const inserted = await db
    .with('inserted', (qb) =>
      qb
        .insertInto('workflowExecution')
        .values({
          id: input.id ?? newId(),
          ...(input.projectId === undefined ? {} : { projectId: input.projectId }),
          workflowId: input.workflowId,
          workflowName: input.workflowName,
          definition: input.definition,
          status: input.status,
          message: storableText(input.message ?? ''),
          triggerId: input.triggerId ?? null,
          temporalWorkflowId: input.temporalWorkflowId,
          temporalNamespace: input.temporalNamespace ?? null,
          executionStart: input.executionStart ?? new Date(),
          executionEnd: input.executionEnd ?? null,
          inputs: JSON.stringify(input.inputs ?? {}),
          rerunOf: input.rerun?.of ?? null,
          revision: input.revision ?? null,
          ...(input.parent
            ? {
                parentExecutionId: input.parent.executionId,
                parentTaskExecutionId: input.parent.taskExecutionId,
                parentTaskName: input.parent.taskName,
              }
            : {}),
          startedBy: input.startedBy ?? null,
          ...(input.dryRun
            ? {
                dryRun: true,
                dryRunMocks: input.dryRun.mocks ? JSON.stringify(input.dryRun.mocks) : null,
                dryRunTestCase: input.dryRun.testCase ?? null,
              }
            : {}),
        })
        .onConflict((oc) => oc.column('temporalWorkflowId').doNothing())
        .returningAll(),
    )
    .with('tasks', (qb) =>
      qb
        .insertInto('taskExecution')
        .columns(pendingTaskColumns)
        .expression(pendingTaskRows(input.taskNames, input.rerun?.reused, taskIds)),
    )
    .selectFrom('inserted')
    .selectAll()
    .executeTakeFirst();
  if (inserted) return { execution: inserted, created: true, taskIds };
  const existing = await findByTemporalWorkflowId(db, input.temporalWorkflowId);
  if (!existing) throw new Error(`Execution of ${input.temporalWorkflowId} vanished`);
  return { execution: existing, created: false };
}

/** An execution of a workflow; undefined when unknown or of another workflow. */
export async function findById(
  db: Kysely<Database>,
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
  db: Kysely<Database>,
  executionId: string,
): Promise<WorkflowExecutionRow | undefined> {
  if (!isUuid(executionId)) return undefined;
  return db
    .selectFrom('workflowExecution')
    .selectAll()
    .where('id', '=', executionId)
    .executeTakeFirst();
}

/**
 * An execution and its task roster (task ids, the tasks Completed already), read in one query:
 * what a run needs to start.
 */
export async function findExecutionForRun(
  db: Kysely<Database>,
  executionId: string,
): Promise<{ execution: WorkflowExecutionRow; roster: TaskRoster } | undefined> {
  if (!isUuid(executionId)) return undefined;
  const row = await db
    .selectFrom('workflowExecution')
    .selectAll('workflowExecution')
    .select(rosterColumn.as('roster'))
    .where('id', '=', executionId)
    .executeTakeFirst();
  if (!row) return undefined;
  const { roster, ...execution } = row;
  return { execution, roster: rosterOf(roster) };
}

/** The execution run by a Temporal workflow id. */
export async function findByTemporalWorkflowId(
  db: Kysely<Database>,
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
  'id' | 'status' | 'executionStart' | 'executionEnd' | 'dryRun'
>;

type ExecutionsAfter = { workflowId: string; after: string; limit: number };

/**
 * A workflow's executions after one of them (newest first), in one statement: the cursor's start
 * and id come from a subquery by primary key, then an index range scan from them, so a page costs
 * the same at any depth. A cursor that is not one of the workflow's executions gives no rows.
 */
function executionsAfter(db: Kysely<Database>, values: ExecutionsAfter, status?: ExecutionStatus) {
  let query = db
    .selectFrom('workflowExecution')
    .select(['id', 'status', 'executionStart', 'executionEnd', 'dryRun'])
    .where('workflowId', '=', values.workflowId);
  if (status !== undefined) query = query.where('status', '=', status);
  return query
    .where(
      (eb) =>
        sql<boolean>`(${eb.ref('executionStart')}, ${eb.ref('id')}) < (${eb
          .selectFrom('workflowExecution as cursor')
          .select(['cursor.executionStart', 'cursor.id'])
          .where('cursor.id', '=', values.after)
          .where('cursor.workflowId', '=', values.workflowId)})`,
    )
    .orderBy('executionStart', 'desc')
    .orderBy('id', 'desc')
    .limit(values.limit);
}

// Prepared (built and compiled once): clients page through long histories of runs.
const pagesAfter = {
  all: preparedQuery((db, values: ExecutionsAfter) => executionsAfter(db, values)),
  ofStatus: preparedQuery((db, values: ExecutionsAfter & { status: ExecutionStatus }) =>
    executionsAfter(db, values, values.status),
  ),
};

/**
 * A workflow's executions, newest first (ties by id), optionally of one status: a numbered page,
 * the executions after a given one, or all of them.
 */
export async function list(
  db: Kysely<Database>,
  workflowId: string,
  options: { status?: ExecutionStatus; slice?: Slice } = {},
): Promise<Paged<ExecutionSummary>> {
  const { status, slice = {} } = options;
  if (!('after' in slice)) {
    let query = db
      .selectFrom('workflowExecution')
      .select(['id', 'status', 'executionStart', 'executionEnd', 'dryRun'])
      .where('workflowId', '=', workflowId);
    if (status) query = query.where('status', '=', status);
    const ordered = query.orderBy('executionStart', 'desc').orderBy('id', 'desc');
    return paginate(ordered, 'page' in slice ? slice.page : undefined);
  }
  const unknownCursor = () =>
    new Invalid(
      problemAt(
        'query.after',
        `must be the id of an execution of this workflow (${slice.after} is not)`,
      ),
    );
  if (!isUuid(slice.after)) throw unknownCursor();
  const values = { workflowId, after: slice.after, limit: slice.pageSize };
  const items = status
    ? await pagesAfter.ofStatus(db, { ...values, status })
    : await pagesAfter.all(db, values);
  // No executions: the end of the list, or a cursor that is not one of the workflow's.
  if (items.length === 0) {
    const cursor = await db
      .selectFrom('workflowExecution')
      .select('id')
      .where('id', '=', slice.after)
      .where('workflowId', '=', workflowId)
      .executeTakeFirst();
    if (!cursor) throw unknownCursor();
  }
  return keysetPage(items, slice.pageSize);
}

/** A workflow's latest finished real executions (Completed or Failed, not dry runs), newest first. */
export async function latestFinishedRealExecutions(
  db: Kysely<Database>,
  workflowId: string,
  limit: number,
): Promise<WorkflowExecutionRow[]> {
  return db
    .selectFrom('workflowExecution')
    .selectAll()
    .where('workflowId', '=', workflowId)
    .where('status', 'in', ['Completed', 'Failed'])
    .where('dryRun', '=', false)
    .orderBy('executionStart', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Whether a workflow has executions that have not finished. */
export async function hasActiveExecutions(
  db: Kysely<Database>,
  workflowId: string,
): Promise<boolean> {
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
 * Dedupe key of the entry a run logs once it has taken its execution on (recovery restarts only
 * executions without it): `executionStartedLogKey`.
 */
export const executionPreparedLogKey = executionStartedLogKey;

/** An active execution as recovery sees it. */
export type ActiveExecution = Pick<
  WorkflowExecutionRow,
  | 'id'
  | 'workflowId'
  | 'projectId'
  | 'workflowName'
  | 'temporalWorkflowId'
  | 'status'
  | 'executionStart'
  | 'triggerId'
  | 'rerunOf'
  | 'temporalNamespace'
  | 'dryRun'
> & {
  /** The name of its project. */
  project: string;
};

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
  db: Kysely<Database>,
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
    .innerJoin('project as pr', 'pr.id', 'e.projectId')
    .select([
      'e.id',
      'e.workflowId',
      'e.projectId',
      'e.workflowName',
      'e.temporalWorkflowId',
      'e.status',
      'e.executionStart',
      'e.triggerId',
      'e.rerunOf',
      'e.temporalNamespace',
      'e.dryRun',
      'pr.name as project',
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
      if (options.prepared) return prepared;
      // A subworkflow's run is started by its parent's run, which closes the row itself when it
      // never starts it: while the parent is active, the child's row is not recovery's to start.
      const parentActive = eb.exists(
        eb
          .selectFrom('workflowExecution as p')
          .select(sql<number>`1`.as('one'))
          .whereRef('p.id', '=', 'e.parentExecutionId')
          .where('p.status', 'in', ACTIVE_EXECUTION),
      );
      return eb.and([eb.not(prepared), eb.not(parentActive)]);
    })
    .orderBy('e.executionStart')
    .orderBy('e.id')
    .limit(options.limit)
    .execute();
}

/**
 * Ends an execution its run cannot carry on: the Temporal run is gone without writing its outcome
 * (recovery), or the run cannot go on at all (the engine met data it cannot use). The execution
 * gets `outcome`, with a log entry saying why (under `logKey`, once), and every unfinished task
 * and every approval still Pending is Canceled. Returns the execution when this call ended it: one
 * that finished meanwhile keeps its own outcome (undefined).
 */
export async function finishAbandonedExecution(
  db: Kysely<Database>,
  executionId: string,
  outcome: { status: Extract<ExecutionStatus, 'Failed' | 'Canceled'>; message: string; at: Date },
  logKey = 'recovery:abandoned',
): Promise<ChangedExecution | undefined> {
  return db.transaction().execute(async (trx) => {
    const finished = await trx
      .updateTable('workflowExecution')
      .set({
        status: outcome.status,
        message: storableText(outcome.message),
        executionEnd: outcome.at,
      })
      .where('id', '=', executionId)
      .where('status', 'in', ACTIVE_EXECUTION)
      .returning(['workflowId', 'temporalWorkflowId', 'executionStart', 'projectId'])
      .executeTakeFirst();
    if (!finished) return undefined;
    await cancelUnfinishedTasks(trx, executionId, outcome);
    await cancelPendingApprovals(trx, executionId, outcome);
    await appendLogs(trx, [
      {
        executionId,
        taskExecutionId: null,
        dedupeKey: logKey,
        level: 'Error',
        message: outcome.message,
        timeStamp: outcome.at,
      },
    ]);
    return finished;
  });
}

/**
 * The Temporal run that writes an execution's rows: `undefined` for its first run (and for the
 * API), or the id of a run an operator reset from the Temporal UI or CLI. A reset run writes once
 * it has taken the execution over (`claimForRun`), and takes over each task and approval it
 * writes from the run before it; from then on the earlier run's writes change nothing.
 */
export type RunWriter = string | undefined;

/** Rows the writer may change: a first run's, until a reset run took them over. */
function writtenBy<QB extends WhereInterface<Database, 'workflowExecution'>>(
  query: QB,
  run: RunWriter,
): QB {
  return (
    run === undefined
      ? query.where('temporalRunId', 'is', null)
      : query.where('temporalRunId', '=', run)
  ) as QB;
}

/**
 * Hands the execution to a Temporal run an operator reset (UI or CLI), which runs again what
 * follows its reset point: once per run, the execution is active again (Running unless it still
 * was), without its end, message and outputs, and says so in its log. `fromStart` (the run was
 * reset to its beginning, so it prepares the execution again): every task is Pending again,
 * except those a rerun took over (Completed without an attempt). True when this call took it.
 */
export async function claimForRun(
  db: Kysely<Database>,
  executionId: string,
  run: string,
  options: { fromStart: boolean; at?: Date },
): Promise<boolean> {
  const at = options.at ?? new Date();
  return db.transaction().execute(async (trx) => {
    const claimed = await trx
      .updateTable('workflowExecution')
      .set({
        temporalRunId: run,
        status: sql`case when status in ('Pending', 'Running', 'Paused') then status else 'Running' end`,
        message: '',
        executionEnd: null,
        outputs: null,
      })
      .where('id', '=', executionId)
      .where('temporalRunId', 'is distinct from', run)
      .returning('id')
      .executeTakeFirst();
    if (!claimed) return false;
    if (options.fromStart) await reopenTasks(trx, executionId, run);
    await appendLogs(trx, [
      {
        executionId,
        taskExecutionId: null,
        dedupeKey: `reset:${run}`,
        level: 'Warning',
        message: `Reset in Temporal: run ${run} runs the execution again from its reset point${options.fromStart ? ' (the start)' : ''}; what follows is that run's.`,
        timeStamp: at,
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
  run?: RunWriter,
): Promise<void> {
  await changeExecution(db, executionId, ['Pending', 'Paused'], { status: 'Running' }, logs, run);
}

/** Paused (only a person can move the run on), with log entries. */
export async function markExecutionPaused(
  db: Kysely<Database>,
  executionId: string,
  logs: NewLogEntry[] = [],
  run?: RunWriter,
): Promise<void> {
  await changeExecution(db, executionId, ['Pending', 'Running'], { status: 'Paused' }, logs, run);
}

/** An execution a status change moved on: what the process log says of its end. */
export interface ChangedExecution {
  workflowId: string;
  temporalWorkflowId: string;
  executionStart: Date;
  projectId: string;
}

/**
 * Finished with its final status, message and end time, with log entries; its approvals still
 * Pending are Canceled (no one can decide them any more). A no-op once finished, so the first
 * final status written wins. One statement: the change, the approvals and the entries land
 * together, in one round trip. Returns the execution when this call finished it, undefined when
 * it had already finished.
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
  run?: RunWriter,
  /**
   * A change that lands in the same statement (the last task's outcome, whose entries lead
   * `logs`): one round trip and one transaction for both.
   */
  alongside?: AttemptChange,
): Promise<ChangedExecution | undefined> {
  const at = outcome.at ?? new Date();
  // Typed as the plain creator: the CTE it adds is not read, only run.
  const creator: QueryCreator<Database> = alongside
    ? (db.with('attempt', () =>
        alongside.returning(sql<number>`1`.as('one')),
      ) as unknown as QueryCreator<Database>)
    : db;
  const change = writtenBy(
    db
      .updateTable('workflowExecution')
      .set({ status: outcome.status, message: storableText(outcome.message), executionEnd: at })
      .where('id', '=', executionId)
      .where('status', 'in', ACTIVE_EXECUTION),
    run,
  ).returning(['workflowId', 'temporalWorkflowId', 'executionStart', 'projectId']);
  const finish = creator
    .with('change', () => change)
    .with('closedApprovals', (query) =>
      query
        .updateTable('approval')
        .set(closedApproval({ ...outcome, at }))
        .where('executionId', '=', executionId)
        .where('status', '=', 'Pending')
        .where((eb) => eb.exists(eb.selectFrom('change').select('workflowId')))
        .returning('approval.id'),
    );
  if (logs.length === 0) return finish.selectFrom('change').selectAll().executeTakeFirst();
  return finish
    .with('entries', (query) =>
      query
        .insertInto('logEntry')
        .values(logs.map(logValues))
        .onConflict((oc) => oc.columns(['executionId', 'dedupeKey']).doNothing())
        .returning('logEntry.id'),
    )
    .selectFrom('change')
    .selectAll()
    .executeTakeFirst();
}

/** Records what a run gives back, evaluated as it completes (before its final status). */
export async function recordExecutionOutputs(
  db: Kysely<Database>,
  executionId: string,
  outputs: Record<string, unknown>,
  run?: RunWriter,
): Promise<void> {
  await writtenBy(
    db
      .updateTable('workflowExecution')
      .set({ outputs: JSON.stringify(outputs) })
      .where('id', '=', executionId)
      .where('status', 'in', ACTIVE_EXECUTION),
    run,
  ).execute();
}

/**
 * Writes `change` to an execution whose status is one of `from`, with its log entries; the
 * execution when it changed.
 */
async function changeExecution(
  db: Kysely<Database>,
  executionId: string,
  from: ExecutionStatus[],
  change: Updateable<WorkflowExecutionTable>,
  logs: NewLogEntry[],
  run: RunWriter,
): Promise<ChangedExecution | undefined> {
  const update = writtenBy(
    db
      .updateTable('workflowExecution')
      .set(change)
      .where('id', '=', executionId)
      .where('status', 'in', from),
    run,
  ).returning(['workflowId', 'temporalWorkflowId', 'executionStart', 'projectId']);
  const [changed] = await withLogsReturning(db, update, logs);
  return changed;
}
