import type { Kysely } from 'kysely';

// Frozen in time. A workflow's executions are listed newest first, ties broken by id: the indexes
// carry the id too, so a page after a given execution (keyset paging) is an index range scan
// from it, as cheap deep in a long list as at its start. They replace the indexes without the id.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('workflow_execution_workflow_start_id_idx')
    .on('workflow_execution')
    .columns(['workflow_id', 'execution_start desc', 'id desc'])
    .execute();
  await db.schema
    .createIndex('workflow_execution_workflow_status_start_id_idx')
    .on('workflow_execution')
    .columns(['workflow_id', 'status', 'execution_start desc', 'id desc'])
    .execute();
  await db.schema.dropIndex('workflow_execution_workflow_start_idx').execute();
  await db.schema.dropIndex('workflow_execution_workflow_status_start_idx').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('workflow_execution_workflow_start_idx')
    .on('workflow_execution')
    .columns(['workflow_id', 'execution_start desc'])
    .execute();
  await db.schema
    .createIndex('workflow_execution_workflow_status_start_idx')
    .on('workflow_execution')
    .columns(['workflow_id', 'status', 'execution_start desc'])
    .execute();
  await db.schema.dropIndex('workflow_execution_workflow_start_id_idx').execute();
  await db.schema.dropIndex('workflow_execution_workflow_status_start_id_idx').execute();
}
