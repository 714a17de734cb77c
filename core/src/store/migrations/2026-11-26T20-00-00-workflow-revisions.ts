import { sql, type Kysely } from 'kysely';

// Frozen in time. Every definition a workflow has had is kept as a numbered revision: the add
// stores revision 1, each update the next. `workflow.revision` is the current one's number, and
// an execution records the revision it snapshotted. Existing workflows become revision 1; an
// existing execution gets revision 1 when it ran that definition, else null (it ran a definition
// replaced before revisions were kept).
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('workflow')
    .addColumn('revision', 'integer', (col) => col.notNull().defaultTo(1))
    .execute();

  await db.schema
    .createTable('workflow_revision')
    .addColumn('workflow_id', 'uuid', (col) =>
      col.notNull().references('workflow.id').onDelete('cascade'),
    )
    .addColumn('revision', 'integer', (col) => col.notNull().check(sql`revision >= 1`))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('definition', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('workflow_revision_pkey', ['workflow_id', 'revision'])
    .execute();
  await sql`
    insert into workflow_revision (workflow_id, revision, name, definition, created_at)
    select id, 1, name, definition, modified_date from workflow
  `.execute(db);

  await db.schema.alterTable('workflow_execution').addColumn('revision', 'integer').execute();
  await sql`
    update workflow_execution e set revision = 1
    from workflow w where w.id = e.workflow_id and w.definition = e.definition
  `.execute(db);
  await db.schema
    .alterTable('workflow_execution')
    .addForeignKeyConstraint(
      'workflow_execution_revision_fkey',
      ['workflow_id', 'revision'],
      'workflow_revision',
      ['workflow_id', 'revision'],
      (constraint) => constraint.onDelete('cascade'),
    )
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workflow_execution').dropColumn('revision').execute();
  await db.schema.dropTable('workflow_revision').execute();
  await db.schema.alterTable('workflow').dropColumn('revision').execute();
}
