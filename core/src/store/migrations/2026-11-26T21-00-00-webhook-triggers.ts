import { sql, type Kysely } from 'kysely';

// Frozen in time. Webhook triggers: a third trigger type, the trigger's signing secret
// (encrypted, as secret plugin settings are: `enc:v2:...`), and the deliveries received, one row
// per `webhook-id`, so that a redelivery finds the execution the first one started instead of
// starting another. A delivery goes with its trigger and with its execution.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table workflow_trigger drop constraint workflow_trigger_type_check`.execute(db);
  await sql`
    alter table workflow_trigger add constraint workflow_trigger_type_check
    check (type in ('Manual', 'TimeBased', 'Webhook'))
  `.execute(db);
  await db.schema.alterTable('workflow_trigger').addColumn('secret', 'text').execute();

  await db.schema
    .createTable('webhook_delivery')
    .addColumn('trigger_id', 'uuid', (col) =>
      col.notNull().references('workflow_trigger.id').onDelete('cascade'),
    )
    .addColumn('webhook_id', 'text', (col) => col.notNull())
    .addColumn('execution_id', 'uuid', (col) =>
      col.notNull().references('workflow_execution.id').onDelete('cascade'),
    )
    .addColumn('received_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('webhook_delivery_pkey', ['trigger_id', 'webhook_id'])
    .execute();
  // Deleting an execution (its workflow's deletion) finds its delivery by this.
  await db.schema
    .createIndex('webhook_delivery_execution_id_idx')
    .on('webhook_delivery')
    .column('execution_id')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_delivery').execute();
  await db.schema.alterTable('workflow_trigger').dropColumn('secret').execute();
  await sql`delete from workflow_trigger where type = 'Webhook'`.execute(db);
  await sql`alter table workflow_trigger drop constraint workflow_trigger_type_check`.execute(db);
  await sql`
    alter table workflow_trigger add constraint workflow_trigger_type_check
    check (type in ('Manual', 'TimeBased'))
  `.execute(db);
}
