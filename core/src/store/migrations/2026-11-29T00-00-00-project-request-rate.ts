import { sql, type Kysely } from 'kysely';

// Frozen in time. A project's API requests, counted across API processes: one row a project
// with the count of its current minute and of the minute before (a sliding window).
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table project_request_rate (
      project_id uuid primary key references project (id) on delete cascade,
      window_start timestamptz not null,
      count integer not null,
      previous_count integer not null
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table project_request_rate`.execute(db);
}
