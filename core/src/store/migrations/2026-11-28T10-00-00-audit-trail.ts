import { sql, type Kysely } from 'kysely';

// Frozen in time. The audit trail: who changed or decided what, append-only and hash-chained.
//
// PostgreSQL itself keeps it so, whatever the application does: a BEFORE INSERT trigger numbers
// each entry and chains it to the one before (hash = sha256 of the previous hash and the entry's
// fields) under a transaction-wide advisory lock, so appends from several API processes form one
// chain in commit order; UPDATE, DELETE and TRUNCATE are refused, except the deletion of entries
// older than the cutoff `purge_audit_entries` sets for its own transaction (retention). A purge
// leaves evidence: its own entry (`auditPurge`) names the first entry it kept and the hash that
// entry follows, so that verification tells a purge from entries deleted behind its back.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create sequence audit_entry_id_seq as bigint`.execute(db);
  await db.schema
    .createTable('audit_entry')
    .addColumn('id', 'bigint', (col) => col.primaryKey())
    .addColumn('at', 'timestamptz', (col) => col.notNull())
    .addColumn('actor', 'text', (col) => col.notNull())
    .addColumn('actor_kind', 'text', (col) =>
      col.notNull().check(sql`actor_kind in ('user', 'key', 'oidc', 'system')`),
    )
    .addColumn('project', 'text')
    .addColumn('operation', 'text', (col) => col.notNull())
    .addColumn('targets', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('status', 'integer', (col) => col.notNull())
    .addColumn('request_id', 'text')
    .addColumn('address', 'text')
    .addColumn('prev_hash', 'text')
    .addColumn('hash', 'text', (col) => col.notNull())
    .execute();
  await sql`alter sequence audit_entry_id_seq owned by audit_entry.id`.execute(db);
  await db.schema.createIndex('audit_entry_at').on('audit_entry').column('at').execute();
  await db.schema
    .createIndex('audit_entry_project_id')
    .on('audit_entry')
    .columns(['project', 'id'])
    .execute();

  // The entry's fields as one JSON array (unambiguous, and jsonb's text is canonical); the time in
  // microseconds since the epoch, whatever the session's time zone.
  await sql`
    create function audit_entry_digest(
      prev_hash text, id bigint, at timestamptz, actor text, actor_kind text, project text,
      operation text, targets jsonb, status integer, request_id text, address text
    ) returns text language sql stable as $$
      select encode(sha256(convert_to(jsonb_build_array(
        prev_hash, id, (extract(epoch from at) * 1000000)::bigint, actor, actor_kind, project,
        operation, targets, status, request_id, address
      )::text, 'UTF8')), 'hex')
    $$`.execute(db);

  await sql`
    create function audit_entry_chain() returns trigger language plpgsql as $$
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
        new.project, new.operation, new.targets, new.status, new.request_id, new.address);
      return new;
    end $$`.execute(db);
  await sql`
    create trigger audit_entry_chain before insert on audit_entry
    for each row execute function audit_entry_chain()`.execute(db);

  await sql`
    create function audit_entry_refuse_change() returns trigger language plpgsql as $$
    declare
      purge_before timestamptz;
    begin
      if tg_op = 'DELETE' then
        purge_before := nullif(current_setting('trellis.audit_purge_before', true), '')::timestamptz;
        if purge_before is not null and old.at < purge_before then
          return old;
        end if;
      end if;
      raise exception 'audit entries are append-only: % refused', tg_op
        using errcode = 'insufficient_privilege';
    end $$`.execute(db);
  await sql`
    create trigger audit_entry_append_only before update or delete on audit_entry
    for each row execute function audit_entry_refuse_change()`.execute(db);
  await sql`
    create trigger audit_entry_no_truncate before truncate on audit_entry
    for each statement execute function audit_entry_refuse_change()`.execute(db);

  // Retention: the one way entries leave, oldest first and never past an entry it keeps (the
  // chain left is whole). Returns how many left. The purge's entry is appended under the chain's
  // lock, so that the first entry it names is still the oldest when it is recorded; the deletion
  // itself does not hold appends back.
  await sql`
    create function purge_audit_entries(retention interval) returns bigint language plpgsql as $$
    declare
      cutoff timestamptz := now() - retention;
      first_kept bigint;
      purged bigint;
      last_purged_hash text;
    begin
      select min(id) into first_kept from audit_entry where at >= cutoff;
      perform set_config('trellis.audit_purge_before', cutoff::text, true);
      with gone as (
        delete from audit_entry
        where at < cutoff and (first_kept is null or id < first_kept)
        returning id, hash
      )
      select count(*), (array_agg(hash order by id desc))[1] into purged, last_purged_hash
      from gone;
      perform set_config('trellis.audit_purge_before', '', true);
      if purged = 0 then
        return 0;
      end if;
      perform pg_advisory_xact_lock(hashtext('trellis.audit_entry'));
      select min(id) into first_kept from audit_entry;
      insert into audit_entry (actor, actor_kind, project, operation, targets, status)
      values ('system', 'system', null, 'auditPurge', jsonb_strip_nulls(jsonb_build_object(
        'purged', purged::text,
        'firstRemainingId', first_kept::text,
        'lastPurgedHash', last_purged_hash
      )), 200);
      return purged;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function purge_audit_entries(interval)`.execute(db);
  await db.schema.dropTable('audit_entry').execute();
  await sql`drop function audit_entry_refuse_change()`.execute(db);
  await sql`drop function audit_entry_chain()`.execute(db);
  await sql`drop function audit_entry_digest(text, bigint, timestamptz, text, text, text, text, jsonb, integer, text, text)`.execute(
    db,
  );
}
