import { sql, type Kysely, type UpdateQueryBuilder, type UpdateResult } from 'kysely';
import { newId } from './ids.js';
import { paginate, type Page, type Paged } from './paging.js';
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

function logValues(entry: NewLogEntry) {
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
  'id' | 'message' | 'level' | 'timeStamp' | 'exception'
>;

/** An execution's own log entries (not its tasks'), oldest first. */
export async function listExecutionLogs(
  db: Kysely<Database>,
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
  db: Kysely<Database>,
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
