import { sql, type Kysely } from 'kysely';

// Frozen in time. A project's API keys: the secret is never stored, only its SHA-256 (`hash`);
// `lookup_id`, the key's public part after `trellis_`, finds the row on its own unique index.
// Revoked keys stay (for the audit trail and the list) and free their name for a new key.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('api_key')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('project_id', 'uuid', (col) =>
      col.notNull().references('project.id').onDelete('cascade'),
    )
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('lookup_id', 'text', (col) => col.notNull().unique())
    .addColumn('hash', 'bytea', (col) => col.notNull())
    .addColumn('roles', 'jsonb', (col) => col.notNull())
    .addColumn('created_by', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz')
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await sql`
    create unique index api_key_live_name_key on api_key (project_id, name)
      where revoked_at is null
  `.execute(db);
  // A project's keys, newest first.
  await db.schema
    .createIndex('api_key_project_created_idx')
    .on('api_key')
    .columns(['project_id', 'created_at desc'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('api_key').execute();
}
