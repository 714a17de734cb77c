import { sql, type Kysely } from 'kysely';

// Frozen in time. A dry run (`dryRun` when started): its tasks that are not pure perform nothing
// and return an output from a stated source, the first of which is the request's `mocks` (task
// name to output, JSON), kept here so that the worker reads them. Every earlier run is real.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table workflow_execution
    add column dry_run boolean not null default false,
    add column dry_run_mocks jsonb`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table workflow_execution drop column dry_run, drop column dry_run_mocks`.execute(
    db,
  );
}
