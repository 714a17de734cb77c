import type { Kysely } from 'kysely';

// Frozen in time. A project's executions are listed across its workflows newest first, ties
// broken by id, optionally of some statuses, and summarized over a range of start times (issue
// 32): the indexes carry the id, so a page after a given execution is an index range scan from
// it. The first replaces the index on (project_id, execution_start), whose queries (a project's
// starts of the last minute) it serves as well.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('workflow_execution_project_start_id_idx')
    .on('workflow_execution')
    .columns(['project_id', 'execution_start desc', 'id desc'])
    .execute();
  await db.schema
    .createIndex('workflow_execution_project_status_start_id_idx')
    .on('workflow_execution')
    .columns(['project_id', 'status', 'execution_start desc', 'id desc'])
    .execute();
  await db.schema.dropIndex('workflow_execution_project_start_idx').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('workflow_execution_project_start_idx')
    .on('workflow_execution')
    .columns(['project_id', 'execution_start'])
    .execute();
  await db.schema.dropIndex('workflow_execution_project_start_id_idx').execute();
  await db.schema.dropIndex('workflow_execution_project_status_start_id_idx').execute();
}
