import { sql, type Kysely } from 'kysely';

// Frozen in time. Idempotency keys of creating requests (POST /workflows/Add, POST .../executions):
// per user, the request's fingerprint and, once it has one, the response to repeat. In the
// database rather than in memory so that they hold across API processes and restarts.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('idempotency_key')
    .addColumn('user_name', 'text', (col) => col.notNull())
    .addColumn('key', 'text', (col) => col.notNull())
    .addColumn('request_hash', 'text', (col) => col.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response', 'jsonb')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('idempotency_key_pkey', ['user_name', 'key'])
    .execute();
  await db.schema
    .createIndex('idempotency_key_created_at_idx')
    .on('idempotency_key')
    .column('created_at')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_key').execute();
}
