/** What PostgreSQL did for a benchmark's unit of work, from its own statistics. */
import { sql } from 'kysely';
import type { BenchEnvironment } from './environment.js';
import { round } from './stats.js';

/**
 * PostgreSQL's own counters around `run`, which does `count` of something (executions,
 * requests): transactions (each autocommit statement is one; every one is a round trip) and rows
 * written, per one of them. PostgreSQL publishes a backend's counters up to 10 s late when it
 * goes idle, hence the waits.
 */
export async function databaseWork(
  env: BenchEnvironment,
  run: () => Promise<unknown>,
  count: number,
): Promise<{ transactions: number; rowsWritten: number; rowsByTable: Record<string, number> }> {
  const counters = async () => {
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    const { rows } = await sql<{ transactions: string; written: string }>`
      select xact_commit + xact_rollback as transactions,
             tup_inserted + tup_updated + tup_deleted as written
      from pg_stat_database where datname = current_database()`.execute(env.db);
    const tables = await sql<{ name: string; written: string }>`
      select relname as name, n_tup_ins + n_tup_upd + n_tup_del as written
      from pg_stat_user_tables`.execute(env.db);
    return {
      transactions: Number(rows[0]!.transactions),
      written: Number(rows[0]!.written),
      byTable: new Map(tables.rows.map((row) => [row.name, Number(row.written)])),
    };
  };
  const before = await counters();
  await run();
  const after = await counters();
  const rowsByTable = Object.fromEntries(
    [...after.byTable]
      .map(
        ([name, written]) =>
          [name, round((written - (before.byTable.get(name) ?? 0)) / count, 1)] as const,
      )
      .filter(([, rows]) => rows > 0)
      .sort((a, b) => b[1] - a[1]),
  );
  return {
    // Minus the first counters query, which commits after it has read the counters (and the
    // second, which reads the tables' counters).
    transactions: (after.transactions - before.transactions - 2) / count,
    rowsWritten: (after.written - before.written) / count,
    rowsByTable,
  };
}

/** Rows written per unit of work, by table: `execution_event 16 · log_entry 8 · …`. */
export function rowsByTableLine(work: { rowsByTable: Record<string, number> }): string {
  return Object.entries(work.rowsByTable)
    .map(([table, rows]) => `${table} ${rows}`)
    .join(' · ');
}
