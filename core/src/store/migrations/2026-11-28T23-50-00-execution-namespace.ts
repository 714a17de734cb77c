import type { Kysely } from 'kysely';

// Frozen in time. The Temporal namespace an execution's run lives in, pinned when the execution
// is created (a project mapped to another namespace later keeps its earlier runs where they
// are). Null: the configured default namespace, where every execution before this runs.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('workflow_execution')
    .addColumn('temporal_namespace', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workflow_execution').dropColumn('temporal_namespace').execute();
}
