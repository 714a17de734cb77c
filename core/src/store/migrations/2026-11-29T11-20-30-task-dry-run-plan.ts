import { sql, type Kysely } from 'kysely';

// Frozen in time. What a dry run's task did, as the worker decided it (JSON): where its output
// came from (`source`: Mock, Recorded, Generated, or RanForReal for a pure plugin; `recordedFrom`
// the execution a recorded output is from), its plugin and declared effects, its parameters
// resolved, and the approval it would have asked (`approval`). Null for every task of a real run,
// and for a dry run's task before it ran or recorded before this column.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table task_execution add column dry_run jsonb`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table task_execution drop column dry_run`.execute(db);
}
