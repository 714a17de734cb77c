import { sql, type Kysely } from 'kysely';

// Frozen in time. Fair shares (issue 29): each project may set its own limits (`limits`, a JSON
// object; a limit it leaves out is the instance's default). The starts of a project's last minute
// are read on an index of its executions by start time. A run's slot under its project's
// running-at-once limit is a concurrency slot too, so an execution may now hold two: one of its
// workflow's key and one of its project (`workflow_id` then names the project).
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('project')
    .addColumn('limits', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();
  await db.schema
    .createIndex('workflow_execution_project_start_idx')
    .on('workflow_execution')
    .columns(['project_id', 'execution_start'])
    .execute();
  await sql`alter table concurrency_slot drop constraint concurrency_slot_pkey`.execute(db);
  await sql`
    alter table concurrency_slot add constraint concurrency_slot_pkey
      primary key (execution_id, workflow_id)
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from concurrency_slot s using project p where s.workflow_id = p.id`.execute(db);
  await sql`alter table concurrency_slot drop constraint concurrency_slot_pkey`.execute(db);
  await sql`
    alter table concurrency_slot add constraint concurrency_slot_pkey primary key (execution_id)
  `.execute(db);
  await db.schema.dropIndex('workflow_execution_project_start_idx').execute();
  await db.schema.alterTable('project').dropColumn('limits').execute();
}
