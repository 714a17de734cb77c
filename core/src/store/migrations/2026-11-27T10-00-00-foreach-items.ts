import { sql, type Kysely } from 'kysely';

// Frozen in time. A forEach task's items are task rows of their own (`Task[3]`): each knows its
// task and its position in the list, and holds its item, which its attempts read.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('task_execution')
    .addColumn('foreach_task_id', 'uuid', (col) =>
      col.references('task_execution.id').onDelete('cascade'),
    )
    .addColumn('item_index', 'integer')
    .addColumn('item', 'jsonb')
    .execute();
  await db.schema
    .createIndex('task_execution_foreach_item_idx')
    .on('task_execution')
    .columns(['foreach_task_id', 'item_index'])
    .where(sql.ref('foreach_task_id'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('task_execution_foreach_item_idx').execute();
  await db.schema
    .alterTable('task_execution')
    .dropColumn('foreach_task_id')
    .dropColumn('item_index')
    .dropColumn('item')
    .execute();
}
