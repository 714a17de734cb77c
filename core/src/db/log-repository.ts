import {
  sql,
  type Kysely,
  type SelectQueryBuilder,
  type UpdateQueryBuilder,
  type UpdateResult,
} from 'kysely';
import { Invalid } from '../errors.js';
import { isUuid, newId } from './ids.js';
import { keysetPage, paginate, type Paged, type Slice } from './paging.js';
import { preparedQuery } from './prepared.js';
import { storableText } from './storable-text.js';
import type { Database, LogEntryRow, LogLevel } from './tables.js';

/**
 * The log entries of executions and their tasks. Writes are idempotent: every entry carries a
 * deterministic `dedupeKey`, so a retried activity or a replayed workflow writing it again
 * inserts nothing. Messages come from plugins as much as from the engine: characters PostgreSQL
 * cannot store are written as U+FFFD (`storableText`) rather than failing the write.
 */

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

/** The row of a new log entry. */
export function logValues(entry: NewLogEntry) {
  return {
    id: newId(),
    executionId: entry.executionId,
    taskExecutionId: entry.taskExecutionId,
    dedupeKey: entry.dedupeKey,
    level: entry.level,
    message: storableText(entry.message),
    exception: entry.exception == null ? null : storableText(entry.exception),
    timeStamp: entry.timeStamp,
  };
}

/**
 * Runs a status change and inserts its log entries in one statement (the change as a
 * data-modifying CTE), so a transition and the entries saying why land together, in one round
 * trip. Entries already written (same dedupe key) are skipped.
 */
export async function withLogs<T extends keyof Database>(
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

/**
 * As `withLogs`, for a change that returns what it changed (`returning`): those rows, none when
 * the change matched nothing. The entries are written either way, as `withLogs` does.
 */
export async function withLogsReturning<
  T extends keyof Database,
  O extends Record<string, unknown>,
>(
  db: Kysely<Database>,
  change: UpdateQueryBuilder<Database, T, T, O>,
  logs: NewLogEntry[],
): Promise<O[]> {
  if (logs.length === 0) return change.execute();
  return db
    .with('change', () => change)
    .with('logs', (cte) =>
      cte
        .insertInto('logEntry')
        .values(logs.map(logValues))
        .onConflict((oc) => oc.columns(['executionId', 'dedupeKey']).doNothing()),
    )
    .selectFrom('change')
    .selectAll()
    .execute() as Promise<O[]>;
}

/** Appends log entries in batches; entries already written (same dedupe key) are skipped. */
export async function appendLogs(db: Kysely<Database>, entries: NewLogEntry[]): Promise<void> {
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
  'id' | 'taskExecutionId' | 'message' | 'level' | 'timeStamp' | 'exception'
>;

const viewColumns = [
  'id',
  'taskExecutionId',
  'message',
  'level',
  'timeStamp',
  'exception',
] as const;

/** Which part of a log list to read (`Slice`: a numbered page, the entries after one, or all). */
export type LogSlice = Slice;

/** Where a list's entries are: an execution's own, an execution's and its tasks', or one task's. */
type LogScope =
  { executionId: string; includeTasks: boolean } | { executionId: string; taskExecutionId: string };

function inScope<O>(
  query: SelectQueryBuilder<Database, 'logEntry', O>,
  scope: LogScope,
): SelectQueryBuilder<Database, 'logEntry', O> {
  if ('taskExecutionId' in scope) return query.where('taskExecutionId', '=', scope.taskExecutionId);
  const own = query.where('executionId', '=', scope.executionId);
  return scope.includeTasks ? own : own.where('taskExecutionId', 'is', null);
}

/**
 * The entries of a list after one of them, in one statement: the cursor entry's `seq` is a
 * subquery (found by its primary key), then an index range scan from it, so a page costs the
 * same at any depth. An unknown cursor gives no rows, as the end of the list does.
 */
function entriesAfter(db: Kysely<Database>, scope: LogScope, after: string, limit: number) {
  return inScope(db.selectFrom('logEntry').select(viewColumns), scope)
    .where('seq', '>', (eb) =>
      inScope(eb.selectFrom('logEntry').select('seq'), scope).where('id', '=', after),
    )
    .orderBy('seq')
    .limit(limit);
}

type AfterValues = { executionId: string; after: string; limit: number };

// Prepared (built and compiled once): clients following a long run page through it.
const pagesAfter = {
  own: preparedQuery((db, values: AfterValues) =>
    entriesAfter(
      db,
      { executionId: values.executionId, includeTasks: false },
      values.after,
      values.limit,
    ),
  ),
  all: preparedQuery((db, values: AfterValues) =>
    entriesAfter(
      db,
      { executionId: values.executionId, includeTasks: true },
      values.after,
      values.limit,
    ),
  ),
  // A task's entries are found by the task alone.
  task: preparedQuery((db, values: { taskExecutionId: string; after: string; limit: number }) =>
    entriesAfter(
      db,
      { executionId: '', taskExecutionId: values.taskExecutionId },
      values.after,
      values.limit,
    ),
  ),
};

function pageAfter(db: Kysely<Database>, scope: LogScope, after: string, limit: number) {
  if ('taskExecutionId' in scope) {
    return pagesAfter.task(db, { taskExecutionId: scope.taskExecutionId, after, limit });
  }
  const values = { executionId: scope.executionId, after, limit };
  return scope.includeTasks ? pagesAfter.all(db, values) : pagesAfter.own(db, values);
}

async function listLogs(
  db: Kysely<Database>,
  scope: LogScope,
  slice: LogSlice,
): Promise<Paged<LogEntryView>> {
  const query = inScope(db.selectFrom('logEntry').select(viewColumns), scope).orderBy('seq');
  if ('page' in slice) return paginate(query, slice.page);
  if (!('after' in slice)) return paginate(query);
  const unknownCursor = () =>
    new Invalid(`query.after: must be the id of an entry of this list (${slice.after} is not)`);
  if (!isUuid(slice.after)) throw unknownCursor();
  const items = await pageAfter(db, scope, slice.after, slice.pageSize);
  // No entries: the end of the list, or a cursor that is not one of its entries.
  if (items.length === 0) {
    const cursor = await inScope(db.selectFrom('logEntry').select('seq'), scope)
      .where('id', '=', slice.after)
      .executeTakeFirst();
    if (!cursor) throw unknownCursor();
  }
  return keysetPage(items, slice.pageSize);
}

/**
 * An execution's own log entries, oldest first; with `includeTasks`, its tasks' entries too, in
 * one timeline (the order they were written in).
 */
export async function listExecutionLogs(
  db: Kysely<Database>,
  executionId: string,
  slice: LogSlice = {},
  options: { includeTasks?: boolean } = {},
): Promise<Paged<LogEntryView>> {
  return listLogs(db, { executionId, includeTasks: options.includeTasks ?? false }, slice);
}

/** One task's log entries, oldest first. */
export async function listTaskLogs(
  db: Kysely<Database>,
  task: { executionId: string; id: string },
  slice: LogSlice = {},
): Promise<Paged<LogEntryView>> {
  return listLogs(db, { executionId: task.executionId, taskExecutionId: task.id }, slice);
}
