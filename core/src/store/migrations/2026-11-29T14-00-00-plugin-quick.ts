import type { Kysely } from 'kysely';

// Frozen in time. An installed plugin keeps whether its manifest says it is quick (its attempts
// run as local activities), so that the process that starts a run can tell without its package.
// Rows installed before this migration say null (not known): built-ins are refreshed with their
// own at start-up; a run whose plugin is not known to be quick or not is prepared by its worker,
// which reads the package, as before.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('plugin').addColumn('quick', 'boolean').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('plugin').dropColumn('quick').execute();
}
