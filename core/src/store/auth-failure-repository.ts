import { sql, type Kysely } from 'kysely';
import type { Database } from './tables.js';

/**
 * Failed logins, counted per key (a user name or a client address) in a fixed window, in the
 * database so that every API process sees the same counts and locks.
 */

/** Whether `key` has failures on record, and until when it is locked (null: it is not). */
export async function failureState(
  db: Kysely<Database>,
  key: string,
): Promise<{ hasFailures: boolean; lockedUntil: Date | null }> {
  const row = await db
    .selectFrom('authFailure')
    .select(
      sql<Date | null>`case when locked_until > now() then locked_until end`.as('lockedUntil'),
    )
    .where('key', '=', key)
    .executeTakeFirst();
  return { hasFailures: row !== undefined, lockedUntil: row?.lockedUntil ?? null };
}

/**
 * Counts one failure for `key` in one statement (so concurrent failures from several processes
 * all count): a window older than `windowSeconds` starts again at 1; reaching `limit` locks the
 * key for `windowSeconds`. Returns when it is locked until, or null.
 */
export async function recordFailure(
  db: Kysely<Database>,
  key: string,
  limit: number,
  windowSeconds: number,
): Promise<Date | null> {
  const window = sql`make_interval(secs => ${windowSeconds})`;
  const fresh = sql<boolean>`auth_failure.window_started_at < now() - ${window}`;
  const failures = sql<number>`case when ${fresh} then 1 else auth_failure.failures + 1 end`;
  const row = await db
    .insertInto('authFailure')
    .values({
      key,
      failures: 1,
      lockedUntil: limit <= 1 ? sql<Date>`now() + ${window}` : null,
    })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        failures,
        windowStartedAt: sql`case when ${fresh} then now() else auth_failure.window_started_at end`,
        lockedUntil: sql`case when ${failures} >= ${limit} then now() + ${window}
          else auth_failure.locked_until end`,
      }),
    )
    .returning('lockedUntil')
    .executeTakeFirstOrThrow();
  return row.lockedUntil && row.lockedUntil > new Date() ? row.lockedUntil : null;
}

/** Forgets the failures of `key` (a successful login), if it had any. */
export async function clearFailures(db: Kysely<Database>, key: string): Promise<void> {
  await db.deleteFrom('authFailure').where('key', '=', key).execute();
}
