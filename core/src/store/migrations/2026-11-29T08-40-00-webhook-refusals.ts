import { sql, type Kysely } from 'kysely';

// Frozen in time. Webhook deliveries a trigger refused (a bad signature, a stale timestamp, a
// paused trigger, a body too large, inputs that do not fit): one row each, beside the accepted
// ones of `webhook_delivery`, so the trigger's delivery log shows why a sender's calls start
// nothing. Never a body or a header's secret: the sender's `webhook-id`, the answer's status,
// code and message. Only the newest rows of each trigger are kept (the application trims them),
// read newest first a page at a time; they go with their trigger.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_refusal')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('trigger_id', 'uuid', (col) =>
      col.notNull().references('workflow_trigger.id').onDelete('cascade'),
    )
    .addColumn('webhook_id', 'text')
    .addColumn('received_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('status', 'integer', (col) => col.notNull())
    .addColumn('code', 'text', (col) => col.notNull())
    .addColumn('reason', 'text', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_refusal_trigger_received_idx')
    .on('webhook_refusal')
    .columns(['trigger_id', 'received_at desc', 'id desc'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_refusal').execute();
}
