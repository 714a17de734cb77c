// Frozen in time. What a completed run gives back: the definition's `outputs`, evaluated when it
// completed. Null until then, and for runs of definitions from before outputs existed.
/* eslint-disable @typescript-eslint/no-explicit-any */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workflow_execution').addColumn('outputs', 'jsonb').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workflow_execution').dropColumn('outputs').execute();
}
