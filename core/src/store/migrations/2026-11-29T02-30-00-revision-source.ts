import { sql, type Kysely } from 'kysely';

// Frozen in time. Where a revision's definition came from when a tool says so (`trellis apply
// --source <commit>`): free text, null for revisions stored by add and update.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table workflow_revision add column source text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table workflow_revision drop column source`.execute(db);
}
