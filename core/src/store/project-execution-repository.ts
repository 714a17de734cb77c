import { sql, type Kysely } from 'kysely';
import { Invalid } from '#definition/errors.js';
import { problemAt } from '#definition/validation/problem.js';
import { isUuid } from './ids.js';
import type { Database, ExecutionStatus, TriggerType, WorkflowExecutionRow } from './tables.js';

/**
 * A project's executions across its workflows: the explorer's list and the overview's figures,
 * read on the indexes of migration `2026-11-29T02-00-00-project-execution-list-keys`.
 */

/**
 * Not a run of a draft (the test runs of a definition not stored, `workflow.draft_until`): those
 * are nobody's workflow's, and no list or figure shows them.
 */
const notOfDraft = (workflowId: 'e.workflowId' | 'workflowId') =>
  sql<boolean>`not exists (select 1 from workflow draft
    where draft.id = ${sql.ref(workflowId)} and draft.draft_until is not null)`;

/** How a run was started: not by a trigger, by a trigger of a type, or by one trigger. */
export type StartedThrough = 'manual' | Exclude<TriggerType, 'Manual'> | { triggerId: string };

export interface ProjectExecutionFilter {
  statuses?: ExecutionStatus[];
  workflowId?: string;
  startedThrough?: StartedThrough;
  startedBy?: string;
  /** Started at or after. */
  from?: Date;
  /** Started before. */
  to?: Date;
  /** Only dry runs (true), only real runs (false). */
  dryRun?: boolean;
}

export type ProjectExecutionItem = Pick<
  WorkflowExecutionRow,
  'id' | 'status' | 'executionStart' | 'executionEnd' | 'dryRun' | 'workflowId' | 'workflowName'
>;

/**
 * A project's executions, newest first (ties by id), filtered; `after` one of them (keyset paging:
 * an index range scan from it). A cursor that is not one of the project's executions is `Invalid`.
 */
export async function listProjectExecutions(
  db: Kysely<Database>,
  projectId: string,
  filter: ProjectExecutionFilter,
  page: { after?: string; limit: number },
): Promise<ProjectExecutionItem[]> {
  const { after } = page;
  const unknownCursor = () =>
    new Invalid(
      problemAt('query.after', `must be the id of an execution of this project (${after} is not)`),
    );
  if (after !== undefined && !isUuid(after)) throw unknownCursor();
  const { statuses, workflowId, startedThrough, startedBy, from, to, dryRun } = filter;
  const items = await db
    .selectFrom('workflowExecution as e')
    .select([
      'e.id',
      'e.status',
      'e.executionStart',
      'e.executionEnd',
      'e.dryRun',
      'e.workflowId',
      'e.workflowName',
    ])
    .where('e.projectId', '=', projectId)
    .where(notOfDraft('e.workflowId'))
    .$if(statuses !== undefined && statuses.length > 0, (q) => q.where('e.status', 'in', statuses!))
    .$if(workflowId !== undefined, (q) => q.where('e.workflowId', '=', workflowId!))
    .$if(startedBy !== undefined, (q) => q.where('e.startedBy', '=', startedBy!))
    .$if(from !== undefined, (q) => q.where('e.executionStart', '>=', from!))
    .$if(to !== undefined, (q) => q.where('e.executionStart', '<', to!))
    .$if(dryRun !== undefined, (q) => q.where('e.dryRun', '=', dryRun!))
    .$if(startedThrough === 'manual', (q) => q.where('e.triggerId', 'is', null))
    .$if(typeof startedThrough === 'object', (q) =>
      q.where('e.triggerId', '=', (startedThrough as { triggerId: string }).triggerId),
    )
    .$if(startedThrough === 'TimeBased' || startedThrough === 'Webhook', (q) =>
      q.where('e.triggerId', 'in', (eb) =>
        eb
          .selectFrom('workflowTrigger')
          .select('workflowTrigger.id')
          .where('workflowTrigger.type', '=', startedThrough as TriggerType),
      ),
    )
    .$if(after !== undefined, (q) =>
      q.where(
        (eb) =>
          sql<boolean>`(${eb.ref('e.executionStart')}, ${eb.ref('e.id')}) < (${eb
            .selectFrom('workflowExecution as cursor')
            .select(['cursor.executionStart', 'cursor.id'])
            .where('cursor.id', '=', after!)
            .where('cursor.projectId', '=', projectId)})`,
      ),
    )
    .orderBy('e.executionStart', 'desc')
    .orderBy('e.id', 'desc')
    .limit(page.limit)
    .execute();
  if (after !== undefined && items.length === 0) {
    const cursor = await db
      .selectFrom('workflowExecution')
      .select('id')
      .where('id', '=', after)
      .where('projectId', '=', projectId)
      .executeTakeFirst();
    if (!cursor) throw unknownCursor();
  }
  return items;
}

/** Those of the project's executions among `ids` (an id of none, or of another project's, is absent). */
export async function findProjectExecutions(
  db: Kysely<Database>,
  projectId: string,
  ids: readonly string[],
): Promise<WorkflowExecutionRow[]> {
  const known = ids.filter(isUuid);
  if (known.length === 0) return [];
  return db
    .selectFrom('workflowExecution')
    .selectAll()
    .where('projectId', '=', projectId)
    .where('id', 'in', known)
    .where(notOfDraft('workflowId'))
    .execute();
}

/** A range of start times cut into buckets of equal length, the first starting at `first`. */
export interface BucketedRange {
  from: Date;
  to: Date;
  first: Date;
  /** A PostgreSQL interval: `1 hour`, `1 day`. */
  step: string;
}

/** How many of a project's executions started in one bucket, in one status (as they are now). */
export interface BucketCount {
  start: Date;
  status: ExecutionStatus;
  count: number;
}

/** Real executions (not dry runs) that started in the range, by bucket and status. */
export async function countByBucket(
  db: Kysely<Database>,
  projectId: string,
  range: BucketedRange,
): Promise<BucketCount[]> {
  const rows = await db
    .selectFrom('workflowExecution')
    .select((eb) => [
      sql<Date>`date_bin(${range.step}::interval, ${eb.ref('executionStart')}, ${range.first})`.as(
        'start',
      ),
      'status',
      eb.fn.countAll<string>().as('count'),
    ])
    .where('projectId', '=', projectId)
    .where('executionStart', '>=', range.from)
    .where('executionStart', '<', range.to)
    .where('dryRun', '=', false)
    .groupBy(['start', 'status'])
    .orderBy('start')
    .execute();
  return rows.map((row) => ({
    start: new Date(row.start),
    status: row.status,
    count: Number(row.count),
  }));
}

const finishedStatuses: ExecutionStatus[] = ['Completed', 'Failed', 'Canceled'];

/** Of the real executions that started in the range: how many finished, failed, and how long they took. */
export async function finishedFigures(
  db: Kysely<Database>,
  projectId: string,
  range: { from: Date; to: Date },
): Promise<{ finished: number; failed: number; p50Ms: number | null; p95Ms: number | null }> {
  const durationMs = sql`extract(epoch from execution_end - execution_start) * 1000`;
  const { rows } = await sql<{
    finished: string;
    failed: string;
    p50: number | string | null;
    p95: number | string | null;
  }>`
    select count(*) as finished,
           count(*) filter (where status = 'Failed') as failed,
           percentile_cont(0.5) within group (order by ${durationMs}) as p50,
           percentile_cont(0.95) within group (order by ${durationMs}) as p95
      from workflow_execution
     where project_id = ${projectId}
       and execution_start >= ${range.from} and execution_start < ${range.to}
       and status in (${sql.join(finishedStatuses)})
       and execution_end is not null
       and not dry_run`.execute(db);
  const row = rows[0];
  const milliseconds = (value: number | string | null | undefined) =>
    value === null || value === undefined ? null : Number(value);
  return {
    finished: Number(row?.finished ?? 0),
    failed: Number(row?.failed ?? 0),
    p50Ms: milliseconds(row?.p50),
    p95Ms: milliseconds(row?.p95),
  };
}

/** A project's real executions that run now, that wait for an approval now, and their approvals waiting. */
export async function activeFigures(
  db: Kysely<Database>,
  projectId: string,
): Promise<{ running: number; paused: number; approvalsWaiting: number }> {
  const { rows } = await sql<{ running: string; paused: string; approvals: string }>`
    select count(*) filter (where e.status in ('Pending', 'Running')) as running,
           count(*) filter (where e.status = 'Paused') as paused,
           (select count(*)
              from approval a
              join workflow_execution w on w.id = a.execution_id
             where a.status = 'Pending' and w.project_id = ${projectId}
               and w.status in ('Pending', 'Running', 'Paused') and not w.dry_run) as approvals
      from workflow_execution e
     where e.project_id = ${projectId} and e.status in ('Pending', 'Running', 'Paused')
       and not e.dry_run`.execute(db);
  const row = rows[0];
  return {
    running: Number(row?.running ?? 0),
    paused: Number(row?.paused ?? 0),
    approvalsWaiting: Number(row?.approvals ?? 0),
  };
}

export interface ExecutionFailureView {
  id: string;
  workflowId: string;
  workflowName: string;
  executionStart: Date;
  executionEnd: Date | null;
  /** The task that failed last; null when the run failed outside its tasks. */
  taskName: string | null;
  /** That task's message, else the execution's. */
  message: string;
}

/** How many dry runs started in the range, whatever their status. */
export async function countDryRuns(
  db: Kysely<Database>,
  projectId: string,
  range: { from: Date; to: Date },
): Promise<number> {
  const row = await db
    .selectFrom('workflowExecution')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('projectId', '=', projectId)
    .where('executionStart', '>=', range.from)
    .where('executionStart', '<', range.to)
    .where('dryRun', '=', true)
    .where(notOfDraft('workflowId'))
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** The most recent failed real executions that started in the range, with the task that failed them. */
export async function recentFailures(
  db: Kysely<Database>,
  projectId: string,
  range: { from: Date; to: Date },
  limit: number,
): Promise<ExecutionFailureView[]> {
  if (limit === 0) return [];
  const rows = await db
    .selectFrom('workflowExecution as e')
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('taskExecution as t')
          .select(['t.name', 't.message'])
          .whereRef('t.executionId', '=', 'e.id')
          .where('t.status', '=', 'Failed')
          .orderBy(sql`t.end_time desc nulls last`)
          .orderBy('t.position', 'desc')
          .limit(1)
          .as('failedTask'),
      (join) => join.onTrue(),
    )
    .select([
      'e.id',
      'e.workflowId',
      'e.workflowName',
      'e.executionStart',
      'e.executionEnd',
      'e.message as executionMessage',
      'failedTask.name as taskName',
      'failedTask.message as taskMessage',
    ])
    .where('e.projectId', '=', projectId)
    .where('e.status', '=', 'Failed')
    .where('e.dryRun', '=', false)
    .where('e.executionStart', '>=', range.from)
    .where('e.executionStart', '<', range.to)
    .orderBy('e.executionStart', 'desc')
    .orderBy('e.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(({ executionMessage, taskMessage, taskName, ...row }) => ({
    ...row,
    taskName: taskName ?? null,
    message: (taskName ? taskMessage : null) || executionMessage,
  }));
}

export type RecentRun = Pick<
  WorkflowExecutionRow,
  'id' | 'workflowId' | 'status' | 'executionStart'
>;

/**
 * The latest `perWorkflow` runs of each of these workflows, newest first: one range scan of the
 * (workflow, start) index per workflow, not a read of every run.
 */
export async function latestRunsOf(
  db: Kysely<Database>,
  workflowIds: string[],
  perWorkflow: number,
): Promise<RecentRun[]> {
  if (workflowIds.length === 0 || perWorkflow === 0) return [];
  return db
    .selectFrom('workflow as w')
    .where('w.id', 'in', workflowIds)
    .innerJoinLateral(
      (eb) =>
        eb
          .selectFrom('workflowExecution')
          .select(['id', 'workflowId', 'status', 'executionStart'])
          .whereRef('workflowExecution.workflowId', '=', 'w.id')
          .orderBy('executionStart', 'desc')
          .orderBy('id', 'desc')
          .limit(perWorkflow)
          .as('r'),
      (join) => join.onTrue(),
    )
    .select(['r.id', 'r.workflowId', 'r.status', 'r.executionStart'])
    .orderBy('r.workflowId')
    .orderBy('r.executionStart', 'desc')
    .orderBy('r.id', 'desc')
    .execute();
}
