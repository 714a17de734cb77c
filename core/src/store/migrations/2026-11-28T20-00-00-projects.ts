import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

// Frozen in time. Projects own workflows (and, through them, triggers, executions, tasks, logs
// and approvals) and plugin configurations. Everything that exists moves into the project named
// `default`, which a row written without a project (by code from before projects) lands in too:
// `project_id` defaults to it. An execution's project is its workflow's, which a foreign key on
// both columns holds. Names of workflows and configurations are unique within a project.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('project')
    .addColumn('id', 'uuid', (col) => col.primaryKey())
    .addColumn('name', 'text', (col) => col.notNull().unique())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`insert into project (id, name) values (${randomUUID()}, 'default')`.execute(db);

  await db.schema
    .createTable('project_member')
    .addColumn('project_id', 'uuid', (col) =>
      col.notNull().references('project.id').onDelete('cascade'),
    )
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('roles', 'jsonb', (col) => col.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('project_member_pkey', ['project_id', 'name'])
    .execute();
  // "Which projects is this caller a member of": GET /projects for every caller.
  await db.schema
    .createIndex('project_member_name_idx')
    .on('project_member')
    .column('name')
    .execute();

  await sql`
    create function default_project_id() returns uuid language sql stable
    as $$ select id from project where name = 'default' $$
  `.execute(db);

  for (const table of ['workflow', 'workflow_execution', 'plugin_configuration']) {
    await sql`
      alter table ${sql.table(table)} add column project_id uuid not null
        default default_project_id() references project (id)
    `.execute(db);
  }

  await sql`alter table workflow drop constraint workflow_name_key`.execute(db);
  await sql`
    alter table workflow add constraint workflow_project_id_name_key unique (project_id, name)
  `.execute(db);
  await sql`
    alter table workflow add constraint workflow_project_id_id_key unique (project_id, id)
  `.execute(db);
  await sql`
    alter table workflow_execution add constraint workflow_execution_project_workflow_fkey
      foreign key (project_id, workflow_id) references workflow (project_id, id) on delete cascade
  `.execute(db);

  await sql`alter table plugin_configuration drop constraint plugin_configuration_name_key`.execute(
    db,
  );
  await sql`
    alter table plugin_configuration add constraint plugin_configuration_project_id_name_key
      unique (project_id, name)
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    alter table plugin_configuration drop constraint plugin_configuration_project_id_name_key
  `.execute(db);
  await sql`
    alter table plugin_configuration add constraint plugin_configuration_name_key unique (name)
  `.execute(db);
  await sql`
    alter table workflow_execution drop constraint workflow_execution_project_workflow_fkey
  `.execute(db);
  await sql`alter table workflow drop constraint workflow_project_id_id_key`.execute(db);
  await sql`alter table workflow drop constraint workflow_project_id_name_key`.execute(db);
  await sql`alter table workflow add constraint workflow_name_key unique (name)`.execute(db);
  for (const table of ['workflow', 'workflow_execution', 'plugin_configuration']) {
    await sql`alter table ${sql.table(table)} drop column project_id`.execute(db);
  }
  await sql`drop function default_project_id()`.execute(db);
  await db.schema.dropTable('project_member').execute();
  await db.schema.dropTable('project').execute();
}
