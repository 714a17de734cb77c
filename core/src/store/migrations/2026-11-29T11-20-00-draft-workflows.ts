import { sql, type Kysely } from 'kysely';

// Frozen in time. A draft workflow: the row that holds the dry runs of the test cases of a
// definition the project does not store yet (`POST /workflows/tests`), so that each execution
// keeps its workflow and project as every other does. It is nobody's workflow: no list or lookup
// shows it, its name does not take the name of a stored workflow (the unique name holds among
// stored workflows only), and it is removed, with its runs, once `draft_until` has passed and
// none of them is still going. Null for every stored workflow.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table workflow add column draft_until timestamptz`.execute(db);
  await sql`alter table workflow drop constraint workflow_project_id_name_key`.execute(db);
  await sql`
    create unique index workflow_project_id_name_key on workflow (project_id, name)
      where draft_until is null`.execute(db);
  await sql`create index workflow_draft_until_idx on workflow (draft_until)
      where draft_until is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from workflow where draft_until is not null`.execute(db);
  await sql`drop index workflow_draft_until_idx`.execute(db);
  await sql`drop index workflow_project_id_name_key`.execute(db);
  await sql`
    alter table workflow add constraint workflow_project_id_name_key unique (project_id, name)
  `.execute(db);
  await sql`alter table workflow drop column draft_until`.execute(db);
}
