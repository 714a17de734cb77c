import { sql, type Kysely } from 'kysely';

// Frozen in time. Execution recovery scans the executions that have not finished, oldest first,
// every few seconds: a partial index keeps that scan as small as the set of active runs.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('workflow_execution_active_start_idx')
    .on('workflow_execution')
    .columns(['execution_start', 'id'])
    .where(sql.ref('status'), 'in', ['Pending', 'Running', 'Paused'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('workflow_execution_active_start_idx').execute();
}
