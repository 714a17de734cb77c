import { sql, type Kysely } from 'kysely';

// Frozen in time. An installed plugin keeps its manifest's `output` JSON Schema (what it returns,
// shown by GET /plugins/{id}) beside its parameters schema. Rows installed before this migration
// get `{}`: anything, as a manifest without `output` means.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('plugin')
    .addColumn('output_schema', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('plugin').dropColumn('output_schema').execute();
}
