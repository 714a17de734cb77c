import { sql, type Kysely } from 'kysely';

// Frozen in time. Approvals record why they were decided, when they time out and what then
// happens, and may end Canceled (their execution ended first). A listing of every workflow's
// approvals by status (the inbox) reads them in request order. Pending approvals of executions
// that had already finished are Canceled, as they would be from now on.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('approval')
    .addColumn('reason', 'text')
    .addColumn('times_out_at', 'timestamptz')
    .addColumn('on_timeout', 'text', (col) => col.check(sql`on_timeout in ('Approve', 'Reject')`))
    .execute();
  await db.schema.alterTable('approval').dropConstraint('approval_status_check').execute();
  await db.schema
    .alterTable('approval')
    .addCheckConstraint(
      'approval_status_check',
      sql`status in ('Pending', 'Approved', 'Rejected', 'Canceled')`,
    )
    .execute();
  await db.schema
    .createIndex('approval_status_requested_at_idx')
    .on('approval')
    .columns(['status', 'requested_at', 'id'])
    .execute();
  await sql`
    update approval a
    set status = 'Canceled',
        decided_at = coalesce(e.execution_end, now()),
        decided_by = 'system',
        reason = 'The execution ended before a decision.'
    from workflow_execution e
    where e.id = a.execution_id
      and a.status = 'Pending'
      and e.status in ('Completed', 'Failed', 'Canceled')
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('approval_status_requested_at_idx').execute();
  await sql`
    update approval
    set status = 'Pending', decided_at = null, decided_by = null
    where status = 'Canceled'
  `.execute(db);
  await db.schema.alterTable('approval').dropConstraint('approval_status_check').execute();
  await db.schema
    .alterTable('approval')
    .addCheckConstraint('approval_status_check', sql`status in ('Pending', 'Approved', 'Rejected')`)
    .execute();
  await db.schema
    .alterTable('approval')
    .dropColumn('on_timeout')
    .dropColumn('times_out_at')
    .dropColumn('reason')
    .execute();
}
