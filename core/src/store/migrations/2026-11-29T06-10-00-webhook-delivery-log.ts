import type { Kysely } from 'kysely';

// Frozen in time. A Webhook trigger's delivery log is read newest first a page at a time
// (keyset paging on received_at, then webhook_id): an index range scan instead of a sort of
// every delivery the trigger received.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('webhook_delivery_trigger_received_idx')
    .on('webhook_delivery')
    .columns(['trigger_id', 'received_at desc', 'webhook_id desc'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_delivery_trigger_received_idx').execute();
}
