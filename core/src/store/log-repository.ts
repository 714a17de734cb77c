import {
  sql,
  type Kysely,
  type SelectQueryBuilder,
  type UpdateQueryBuilder,
  type UpdateResult,
} from 'kysely';
import { executionLogDefaults } from '#platform/config/schema.js';
import { Invalid } from '#definition/errors.js';
import { problemAt } from '#definition/validation/problem.js';
import { isUuid, newId } from './ids.js';
import { keysetPage, paginate, type Paged, type Slice } from './paging.js';
import { preparedQuery } from './prepared.js';
import { storableText } from '#definition/storable-text.js';
import type { Database, LogEntryRow, LogLevel } from './tables.js';

/**
 * The log entries of executions and their tasks. Writes are idempotent: every entry carries a
 * deterministic `dedupeKey`, so a retried activity or a replayed workflow writing it again
 * inserts nothing. Messages come from plugins as much as from the engine: characters PostgreSQL
 * cannot store are written as U+FFFD (`storableText`) rather than failing the write, and text
 * past `ExecutionLogs.MaxEntryBytes` is cut by the database handle itself (`log-entry-cap.ts`).
 * Reads are bounded in bytes as well as in entries (`withinBytes`).
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

/** Where a page's entries come from: their fields, their order, and their text's size. */
function entriesOf(db: Kysely<Database>, scope: LogScope) {
  // octet_length reads a stored text's size, not the text: sizing entries left out costs nothing.
  const bytes = sql<number>`octet_length(message) + coalesce(octet_length(exception), 0)`;
  return inScope(
    db.selectFrom('logEntry').select([...viewColumns, 'seq', bytes.as('bytes')]),
    scope,
  );
}

type PageQuery = ReturnType<typeof entriesOf>;

/**
 * The entries of `page` (ordered, limited) that begin before the page holds `maxBytes` of text
 * (messages and exceptions, UTF-8): the page ends early past the bound, and holds at least one
 * entry. Entries are capped as they are written, but a page of them, or one stored before the
 * cap, could still add up to more than a response should hold.
 */
function withinBytes(db: Kysely<Database>, page: PageQuery, maxBytes: number) {
  const counted = db
    .selectFrom(page.as('page'))
    .select([
      ...viewColumns,
      'seq',
      sql<number>`sum(bytes) over (order by seq) - bytes`.as('before'),
    ]);
  return db
    .selectFrom(counted.as('counted'))
    .select(viewColumns)
    .where('before', '<', maxBytes)
    .orderBy('seq');
}

/**
 * The entries of a list after one of them, in one statement: the cursor entry's `seq` is a
 * subquery (found by its primary key), then an index range scan from it, so a page costs the
 * same at any depth. An unknown cursor gives no rows, as the end of the list does.
 */
function entriesAfter(db: Kysely<Database>, scope: LogScope, values: AfterValues) {
  const page = entriesOf(db, scope)
    .where('seq', '>', (eb) =>
      inScope(eb.selectFrom('logEntry').select('seq'), scope).where('id', '=', values.after),
    )
    .orderBy('seq')
    .limit(values.limit);
  return withinBytes(db, page, values.maxBytes);
}

type AfterValues = { after: string; limit: number; maxBytes: number };

// Prepared (built and compiled once): clients following a long run page through it.
const pagesAfter = {
  own: preparedQuery((db, values: AfterValues & { executionId: string }) =>
    entriesAfter(db, { executionId: values.executionId, includeTasks: false }, values),
  ),
  all: preparedQuery((db, values: AfterValues & { executionId: string }) =>
    entriesAfter(db, { executionId: values.executionId, includeTasks: true }, values),
  ),
  // A task's entries are found by the task alone.
  task: preparedQuery((db, values: AfterValues & { taskExecutionId: string }) =>
    entriesAfter(db, { executionId: '', taskExecutionId: values.taskExecutionId }, values),
  ),
};

function pageAfter(db: Kysely<Database>, scope: LogScope, values: AfterValues) {
  if ('taskExecutionId' in scope) {
    return pagesAfter.task(db, { taskExecutionId: scope.taskExecutionId, ...values });
  }
  const of = { executionId: scope.executionId, ...values };
  return scope.includeTasks ? pagesAfter.all(db, of) : pagesAfter.own(db, of);
}

async function listLogs(
  db: Kysely<Database>,
  scope: LogScope,
  slice: LogSlice,
  maxBytes: number,
): Promise<Paged<LogEntryView>> {
  const query = entriesOf(db, scope).orderBy('seq');
  const bounded = (page: PageQuery) => withinBytes(db, page, maxBytes);
  if ('page' in slice) return paginate(query, slice.page, bounded);
  if (!('after' in slice)) return paginate(query, undefined, bounded);
  const unknownCursor = () =>
    new Invalid(
      problemAt('query.after', `must be the id of an entry of this list (${slice.after} is not)`),
    );
  if (!isUuid(slice.after)) throw unknownCursor();
  const items = await pageAfter(db, scope, {
    after: slice.after,
    limit: slice.pageSize,
    maxBytes,
  });
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
 * How much one read of a log may hold: a list (a page, or the whole list) ends early once its
 * entries hold `maxBytes` of text (`ExecutionLogs.MaxPageBytes`).
 */
export interface LogReadLimits {
  maxBytes?: number;
}

/**
 * An execution's own log entries, oldest first; with `includeTasks`, its tasks' entries too, in
 * one timeline (the order they were written in).
 */
export async function listExecutionLogs(
  db: Kysely<Database>,
  executionId: string,
  slice: LogSlice = {},
  options: { includeTasks?: boolean } & LogReadLimits = {},
): Promise<Paged<LogEntryView>> {
  const scope = { executionId, includeTasks: options.includeTasks ?? false };
  return listLogs(db, scope, slice, options.maxBytes ?? executionLogDefaults.MaxPageBytes);
}

/** One task's log entries, oldest first. */
export async function listTaskLogs(
  db: Kysely<Database>,
  task: { executionId: string; id: string },
  slice: LogSlice = {},
  limits: LogReadLimits = {},
): Promise<Paged<LogEntryView>> {
  const scope = { executionId: task.executionId, taskExecutionId: task.id };
  return listLogs(db, scope, slice, limits.maxBytes ?? executionLogDefaults.MaxPageBytes);
}
