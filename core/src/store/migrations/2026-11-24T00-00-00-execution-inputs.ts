import { sql, type Kysely } from 'kysely';

// Frozen in time. The inputs a run was given, with the definition's defaults filled in: read by
// its expressions and shown in its detail. Runs from before inputs existed had none.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('workflow_execution')
    .addColumn('inputs', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workflow_execution').dropColumn('inputs').execute();
}
