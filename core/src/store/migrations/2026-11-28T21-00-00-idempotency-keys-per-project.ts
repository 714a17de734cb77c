import { sql, type Kysely } from 'kysely';

// Frozen in time. Idempotency keys are kept per project as well as per user: the same key sent
// to another project is another request. The keys remembered before are `default`'s, as is a key
// written without a project. A deleted project's keys go with it.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table idempotency_key add column project_id uuid not null
      default default_project_id() references project (id) on delete cascade
  `.execute(db);
  await sql`alter table idempotency_key drop constraint idempotency_key_pkey`.execute(db);
  await sql`
    alter table idempotency_key add constraint idempotency_key_pkey
      primary key (user_name, project_id, key)
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from idempotency_key where project_id <> default_project_id()`.execute(db);
  await sql`alter table idempotency_key drop constraint idempotency_key_pkey`.execute(db);
  await sql`alter table idempotency_key drop column project_id`.execute(db);
  await sql`
    alter table idempotency_key add constraint idempotency_key_pkey primary key (user_name, key)
  `.execute(db);
}
