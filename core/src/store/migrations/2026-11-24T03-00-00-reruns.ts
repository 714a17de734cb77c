import type { Kysely } from 'kysely';

// Frozen in time. A rerun names the execution it reruns; deleting that one leaves the rerun.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('workflow_execution')
    .addColumn('rerun_of', 'uuid', (col) =>
      col.references('workflow_execution.id').onDelete('set null'),
    )
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workflow_execution').dropColumn('rerun_of').execute();
}
