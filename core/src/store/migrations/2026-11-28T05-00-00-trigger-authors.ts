import type { Kysely } from 'kysely';

// Frozen in time. Who created or last changed each trigger (or asked for its latest backfill):
// the runs it fires count that user as their starter for approvals' self-approval rule. Null for
// triggers written before, until they are changed.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workflow_trigger').addColumn('changed_by', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workflow_trigger').dropColumn('changed_by').execute();
}
