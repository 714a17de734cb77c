import { sql, type Kysely } from 'kysely';

// Frozen in time. A project may restrict which installed plugins its workflows use: the plugin
// types it allows, as a JSON array; null (every project until one is set) allows them all.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table project add column allowed_plugins jsonb`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table project drop column allowed_plugins`.execute(db);
}
