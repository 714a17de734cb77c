import { sql, type Kysely } from 'kysely';

// Frozen in time. Approvals that carry data and reach people: the values given with an approval
// and how it was decided (the API, an approval link, Temporal, the system); the form and the
// approvers the definition declared, kept with the approval when it is asked for; who started each run
// (approvers may exclude them); the notifications' delivery attempts; the approval links sent,
// each usable once; and the server's secrets (the links' HMAC key), shared by every process
// through the database.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('approval')
    .addColumn('inputs', 'jsonb')
    .addColumn('decided_via', 'text', (col) =>
      col.check(sql`decided_via in ('Api', 'Link', 'Temporal', 'System')`),
    )
    .addColumn('decided_via_notification', 'text')
    // json, not jsonb: the form's fields keep the order the definition declares them in.
    .addColumn('form', 'json')
    .addColumn('approvers', 'jsonb')
    .execute();
  await db.schema.alterTable('workflow_execution').addColumn('started_by', 'text').execute();

  await db.schema
    .createTable('notification_delivery')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('seq', 'bigserial', (col) => col.notNull())
    .addColumn('event_id', 'text', (col) => col.notNull())
    .addColumn('event', 'text', (col) =>
      col
        .notNull()
        .check(sql`event in ('ApprovalRequested', 'ExecutionFailed', 'ExecutionCompleted')`),
    )
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('execution_id', 'uuid', (col) =>
      col.notNull().references('workflow_execution.id').onDelete('cascade'),
    )
    .addColumn('approval_id', 'uuid')
    .addColumn('attempt', 'integer', (col) => col.notNull())
    .addColumn('outcome', 'text', (col) =>
      col.notNull().check(sql`outcome in ('Delivered', 'Failed', 'Abandoned')`),
    )
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('attempted_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    // One row per attempt: a retried activity attempt records itself once.
    .addUniqueConstraint('notification_delivery_attempt_key', ['event_id', 'attempt'])
    .execute();
  await db.schema
    .createIndex('notification_delivery_seq_idx')
    .on('notification_delivery')
    .column('seq')
    .execute();
  await db.schema
    .createIndex('notification_delivery_execution_id_idx')
    .on('notification_delivery')
    .column('execution_id')
    .execute();

  await db.schema
    .createTable('approval_link')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('approval_id', 'uuid', (col) =>
      col.notNull().references('approval.id').onDelete('cascade'),
    )
    .addColumn('event_id', 'text', (col) => col.notNull().unique())
    .addColumn('expires_at', 'timestamptz', (col) => col.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('approval_link_approval_id_idx')
    .on('approval_link')
    .column('approval_id')
    .execute();

  await db.schema
    .createTable('server_secret')
    .addColumn('name', 'text', (col) => col.primaryKey())
    .addColumn('value', 'text', (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('server_secret').execute();
  await db.schema.dropTable('approval_link').execute();
  await db.schema.dropTable('notification_delivery').execute();
  await db.schema.alterTable('workflow_execution').dropColumn('started_by').execute();
  await db.schema
    .alterTable('approval')
    .dropColumn('inputs')
    .dropColumn('decided_via')
    .dropColumn('decided_via_notification')
    .dropColumn('form')
    .dropColumn('approvers')
    .execute();
}
