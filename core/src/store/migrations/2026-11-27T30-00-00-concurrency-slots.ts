import { sql, type Kysely } from 'kysely';

// Frozen in time. The slots and queue of `configuration.concurrency` (issue 14): one row per
// execution that holds a slot of its workflow's key, or waits in line for one (FIFO by `seq`).
// Admissions serialize per (workflow, key) on an advisory lock; an execution's row goes in the
// statement that records its end (the trigger), whatever path ends it.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('concurrency_slot')
    .addColumn('execution_id', 'uuid', (col) =>
      col.primaryKey().references('workflow_execution.id').onDelete('cascade'),
    )
    .addColumn('workflow_id', 'uuid', (col) => col.notNull())
    .addColumn('key', 'text', (col) => col.notNull())
    .addColumn('slot_limit', 'integer', (col) => col.notNull())
    .addColumn('holding', 'boolean', (col) => col.notNull())
    .addColumn('preempted', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('seq', 'bigint', (col) => col.notNull().generatedAlwaysAsIdentity())
    .addColumn('queued_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('held_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('concurrency_slot_key_idx')
    .on('concurrency_slot')
    .columns(['workflow_id', 'key', 'seq'])
    .execute();
  await sql`
    create function trellis_release_concurrency_slot() returns trigger language plpgsql as $$
    begin
      delete from concurrency_slot where execution_id = new.id;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger workflow_execution_releases_slot after update of status on workflow_execution
    for each row when (new.status in ('Completed', 'Failed', 'Canceled'))
    execute function trellis_release_concurrency_slot()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger workflow_execution_releases_slot on workflow_execution`.execute(db);
  await sql`drop function trellis_release_concurrency_slot()`.execute(db);
  await db.schema.dropTable('concurrency_slot').execute();
}
