import { sql, type Kysely } from 'kysely';

// Frozen in time: the execution engine's additions to the initial schema. Like every migration
// it sees the database as `Kysely<any>`, never the app's current `Database` type.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  // A completed task's output, read by later tasks' expressions. Kept here rather than in the
  // Temporal history so histories stay small whatever the data.
  await db.schema.alterTable('task_execution').addColumn('output', 'jsonb').execute();

  // One approval per task execution: asking twice (a retried activity) returns the first.
  await db.schema.dropIndex('approval_task_execution_id_idx').execute();
  await db.schema
    .createIndex('approval_task_execution_id_key')
    .on('approval')
    .column('task_execution_id')
    .unique()
    .execute();

  // An execution's own log entries (not its tasks'), in order: a page of them without scanning
  // the task entries of a long run.
  await db.schema
    .createIndex('log_entry_execution_own_seq_idx')
    .on('log_entry')
    .columns(['execution_id', 'seq'])
    .where(sql.ref('task_execution_id'), 'is', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('log_entry_execution_own_seq_idx').execute();
  await db.schema.dropIndex('approval_task_execution_id_key').execute();
  await db.schema
    .createIndex('approval_task_execution_id_idx')
    .on('approval')
    .column('task_execution_id')
    .execute();
  await db.schema.alterTable('task_execution').dropColumn('output').execute();
}
