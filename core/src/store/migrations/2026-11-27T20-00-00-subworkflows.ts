import { type Kysely } from 'kysely';

// Frozen in time. Subworkflows: an execution started by a task of another execution (a task with
// `workflow`) names that execution and task. The parent going (its workflow deleted) leaves the
// child an ordinary execution of its own workflow. The index finds a task's children.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('workflow_execution')
    .addColumn('parent_execution_id', 'uuid', (col) =>
      col.references('workflow_execution.id').onDelete('set null'),
    )
    .addColumn('parent_task_execution_id', 'uuid', (col) =>
      col.references('task_execution.id').onDelete('set null'),
    )
    .addColumn('parent_task_name', 'text')
    .execute();
  await db.schema
    .createIndex('workflow_execution_parent_task_idx')
    .on('workflow_execution')
    .columns(['parent_task_execution_id', 'execution_start'])
    .where('parent_task_execution_id', 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('workflow_execution_parent_task_idx').execute();
  await db.schema
    .alterTable('workflow_execution')
    .dropColumn('parent_task_name')
    .dropColumn('parent_task_execution_id')
    .dropColumn('parent_execution_id')
    .execute();
}
