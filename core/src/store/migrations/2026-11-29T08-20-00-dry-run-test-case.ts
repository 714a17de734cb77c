import { sql, type Kysely } from 'kysely';

// Frozen in time. A dry run that runs one of its workflow's test cases names the case here; its
// tasks take their outputs from the case's mocks or their plugin's output schema, never from a
// recorded real run, so that a case gives the same result on any instance. Null for every other run.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table workflow_execution add column dry_run_test_case text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table workflow_execution drop column dry_run_test_case`.execute(db);
}
