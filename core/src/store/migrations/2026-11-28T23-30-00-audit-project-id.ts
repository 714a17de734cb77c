import { sql, type Kysely } from 'kysely';

// Frozen in time. Audit entries carry their project's id beside its name, so that a project's
// trail survives its renaming and its admins can be shown theirs. No foreign key: entries outlive
// the projects they name.
//
// The chain must verify across the upgrade: the entries already recorded keep the hash they were
// recorded with, and their project id (taken from their project's name, now) stays outside it;
// every entry recorded from now on hashes its project id too. Which is which is fixed here, under
// the chain's lock: the last entry recorded before is written into the digest as its boundary.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('trellis.audit_entry'))`.execute(db);
  await sql`alter table audit_entry add column project_id uuid`.execute(db);
  await sql`alter table audit_entry disable trigger audit_entry_append_only`.execute(db);
  await sql`
    update audit_entry set project_id = project.id
    from project where project.name = audit_entry.project
  `.execute(db);
  await sql`alter table audit_entry enable trigger audit_entry_append_only`.execute(db);
  await db.schema
    .createIndex('audit_entry_project_id_id')
    .on('audit_entry')
    .columns(['project_id', 'id'])
    .execute();

  const { rows } = await sql<{ last: string }>`
    select coalesce(max(id), 0)::text as last from audit_entry
  `.execute(db);
  const lastBefore = sql.raw(BigInt(rows[0]?.last ?? '0').toString());
  await sql`
    create function audit_entry_digest(
      prev_hash text, id bigint, at timestamptz, actor text, actor_kind text, project text,
      project_id uuid, operation text, targets jsonb, status integer, request_id text, address text
    ) returns text language sql stable as $$
      select case
        when id <= ${lastBefore} then audit_entry_digest(prev_hash, id, at, actor, actor_kind,
          project, operation, targets, status, request_id, address)
        else encode(sha256(convert_to(jsonb_build_array(
          prev_hash, id, (extract(epoch from at) * 1000000)::bigint, actor, actor_kind, project,
          project_id, operation, targets, status, request_id, address
        )::text, 'UTF8')), 'hex')
      end
    $$`.execute(db);

  await sql`
    create or replace function audit_entry_chain() returns trigger language plpgsql as $$
    declare
      head record;
    begin
      -- One appender at a time, until its transaction ends: the head read next is the last
      -- committed entry, and ids follow commit order.
      perform pg_advisory_xact_lock(hashtext('trellis.audit_entry'));
      select e.id, e.hash into head from audit_entry e order by e.id desc limit 1;
      new.id := nextval('audit_entry_id_seq');
      new.at := clock_timestamp();
      new.prev_hash := head.hash;
      new.hash := audit_entry_digest(new.prev_hash, new.id, new.at, new.actor, new.actor_kind,
        new.project, new.project_id, new.operation, new.targets, new.status, new.request_id,
        new.address);
      return new;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function audit_entry_chain() returns trigger language plpgsql as $$
    declare
      head record;
    begin
      perform pg_advisory_xact_lock(hashtext('trellis.audit_entry'));
      select e.id, e.hash into head from audit_entry e order by e.id desc limit 1;
      new.id := nextval('audit_entry_id_seq');
      new.at := clock_timestamp();
      new.prev_hash := head.hash;
      new.hash := audit_entry_digest(new.prev_hash, new.id, new.at, new.actor, new.actor_kind,
        new.project, new.operation, new.targets, new.status, new.request_id, new.address);
      return new;
    end $$`.execute(db);
  await sql`drop function audit_entry_digest(text, bigint, timestamptz, text, text, text, uuid, text, jsonb, integer, text, text)`.execute(
    db,
  );
  await db.schema.dropIndex('audit_entry_project_id_id').execute();
  await sql`alter table audit_entry drop column project_id`.execute(db);
}
