import type { Kysely } from 'kysely';

// Frozen in time. An installed plugin keeps what its manifest says its tasks do (`effects`:
// pure, reads, writes or calls). Rows installed before this migration get `calls`, the widest,
// as a manifest that does not say means; built-ins are refreshed with their own at start-up.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('plugin')
    .addColumn('effects', 'text', (col) => col.notNull().defaultTo('calls'))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('plugin').dropColumn('effects').execute();
}
