import { sql, type Kysely } from 'kysely';

// Frozen in time. The event log of every execution, which `GET .../events` streams: one row per
// change of the execution, its tasks and approvals, and per log entry, numbered 1, 2, 3... within
// the execution.
//
// Database triggers write the events, in the statement (or, for the execution's status, the
// transaction) of the change they describe, so no writer can forget one, a change and its event
// commit together, and no write costs an extra round trip. A per-execution counter row is bumped
// (and so locked) by every transaction that adds events to an execution: the numbers of one
// execution are handed out in commit order, so a reader that has seen event n has seen every
// event before it, and reading "after n" loses nothing. (A global serial would not do: a
// transaction can take number 7, commit after the one that took 8, and a reader that saw 8 skips 7.)
//
// The triggers are statement-level with transition tables (one counter update per statement
// whatever the rows, e.g. 5,000 log entries), except the execution's status event, which is
// deferred to the commit: it is then the last event of its transaction, after the task and log
// events written with it, so a stream that ends at the terminal status has sent them all.
// Each transaction that adds events notifies `trellis_execution_events` with the execution's id
// (PostgreSQL folds repeats within a transaction); API processes listen to wake their streams.
/* eslint-disable @typescript-eslint/no-explicit-any */

// The counter table and the function that uses it are exported: the migration that numbers
// events without the counter row puts them back when it is rolled back.
export const createCounterTable = sql`
  create table execution_event_sequence (
    execution_id uuid primary key references workflow_execution (id) on delete cascade,
    last_seq bigint not null
  )`;

// Reserves numbers for the events of one statement, all executions at once, and notifies.
// `events` holds (execution_id, ord, type, data, log_entry_id); numbers follow `ord`.
export const appendEventsWithCounterRow = sql`
  create or replace function trellis_append_execution_events(events jsonb) returns void
  language plpgsql as $$
  begin
    with rows as (
      select (e ->> 'executionId')::uuid as execution_id, (e ->> 'ord')::numeric as ord,
             e ->> 'type' as type, e -> 'data' as data, (e ->> 'logEntryId')::uuid as log_entry_id
      from jsonb_array_elements(events) as e
    ),
    counts as (select execution_id, count(*) as n from rows group by execution_id),
    reserved as (
      insert into execution_event_sequence as s (execution_id, last_seq)
      select execution_id, n from counts
      on conflict (execution_id) do update set last_seq = s.last_seq + excluded.last_seq
      returning s.execution_id, s.last_seq
    )
    insert into execution_event (execution_id, seq, type, data, log_entry_id)
    select r.execution_id,
           reserved.last_seq - c.n + row_number() over (partition by r.execution_id order by r.ord),
           r.type, r.data, r.log_entry_id
    from rows r join counts c using (execution_id) join reserved using (execution_id);
    perform pg_notify('trellis_execution_events', execution_id::text)
    from (select distinct (e ->> 'executionId') as execution_id from jsonb_array_elements(events) as e) as ids;
  end $$`;

export async function up(db: Kysely<any>): Promise<void> {
  await createCounterTable.execute(db);

  // No foreign key (a check per event row): the events of a deleted execution go with it through
  // the delete trigger below. A log event refers to its entry rather than copying it.
  await sql`
    create table execution_event (
      execution_id uuid not null,
      seq bigint not null,
      type text not null check (type in ('execution', 'task', 'log', 'approval')),
      data jsonb,
      log_entry_id uuid,
      recorded_at timestamptz not null default clock_timestamp(),
      primary key (execution_id, seq)
    )`.execute(db);

  await appendEventsWithCounterRow.execute(db);

  await sql`
    create function trellis_task_events() returns trigger language plpgsql as $$
    declare events jsonb;
    begin
      if tg_op = 'INSERT' then
        select jsonb_agg(jsonb_build_object(
                 'executionId', n.execution_id, 'ord', n.position, 'type', 'task',
                 'data', jsonb_build_object('taskExecutionId', n.id, 'name', n.name,
                                            'status', n.status, 'message', n.message)))
          into events from new_rows n;
      else
        select jsonb_agg(jsonb_build_object(
                 'executionId', n.execution_id, 'ord', n.position, 'type', 'task',
                 'data', jsonb_build_object('taskExecutionId', n.id, 'name', n.name,
                                            'status', n.status, 'message', n.message)))
          into events
          from new_rows n join old_rows o on o.id = n.id
         where n.status is distinct from o.status or n.message is distinct from o.message;
      end if;
      if events is not null then perform trellis_append_execution_events(events); end if;
      return null;
    end $$`.execute(db);

  await sql`
    create function trellis_approval_events() returns trigger language plpgsql as $$
    declare events jsonb;
    begin
      if tg_op = 'INSERT' then
        select jsonb_agg(jsonb_build_object(
                 'executionId', n.execution_id, 'ord', extract(epoch from n.requested_at) * 1e6,
                 'type', 'approval',
                 'data', jsonb_build_object('id', n.id, 'taskExecutionId', n.task_execution_id,
                                            'taskName', n.task_name, 'status', n.status,
                                            'decidedBy', n.decided_by)))
          into events from new_rows n;
      else
        select jsonb_agg(jsonb_build_object(
                 'executionId', n.execution_id, 'ord', extract(epoch from n.requested_at) * 1e6,
                 'type', 'approval',
                 'data', jsonb_build_object('id', n.id, 'taskExecutionId', n.task_execution_id,
                                            'taskName', n.task_name, 'status', n.status,
                                            'decidedBy', n.decided_by)))
          into events
          from new_rows n join old_rows o on o.id = n.id
         where n.status is distinct from o.status;
      end if;
      if events is not null then perform trellis_append_execution_events(events); end if;
      return null;
    end $$`.execute(db);

  await sql`
    create function trellis_log_events() returns trigger language plpgsql as $$
    declare events jsonb;
    begin
      select jsonb_agg(jsonb_build_object('executionId', n.execution_id, 'ord', n.seq,
                                          'type', 'log', 'logEntryId', n.id))
        into events from new_rows n;
      if events is not null then perform trellis_append_execution_events(events); end if;
      return null;
    end $$`.execute(db);

  await sql`
    create function trellis_execution_created_events() returns trigger language plpgsql as $$
    declare events jsonb;
    begin
      select jsonb_agg(jsonb_build_object(
               'executionId', n.id, 'ord', 0, 'type', 'execution',
               'data', jsonb_build_object('status', n.status, 'message', n.message)))
        into events from new_rows n;
      if events is not null then perform trellis_append_execution_events(events); end if;
      return null;
    end $$`.execute(db);

  // Deferred to the commit (see above), one row at a time: executions change status rarely.
  await sql`
    create function trellis_execution_status_event() returns trigger language plpgsql as $$
    begin
      -- Deleted later in the same transaction: nothing left to tell.
      if not exists (select 1 from workflow_execution where id = new.id) then return null; end if;
      perform trellis_append_execution_events(jsonb_build_array(jsonb_build_object(
        'executionId', new.id, 'ord', 0, 'type', 'execution',
        'data', jsonb_build_object('status', new.status, 'message', new.message))));
      return null;
    end $$`.execute(db);

  await sql`
    create function trellis_execution_deleted() returns trigger language plpgsql as $$
    begin
      delete from execution_event e using old_rows o where e.execution_id = o.id;
      return null;
    end $$`.execute(db);

  // Triggers first: they lock the tables until this migration commits, so the backfill below sees
  // every row written before, and every row written after gets its events from the triggers.
  await sql`
    create trigger workflow_execution_created_events after insert on workflow_execution
    referencing new table as new_rows for each statement
    execute function trellis_execution_created_events()`.execute(db);
  await sql`
    create constraint trigger workflow_execution_status_event after update on workflow_execution
    deferrable initially deferred for each row
    when (old.status is distinct from new.status or old.message is distinct from new.message)
    execute function trellis_execution_status_event()`.execute(db);
  await sql`
    create trigger workflow_execution_deleted_events after delete on workflow_execution
    referencing old table as old_rows for each statement
    execute function trellis_execution_deleted()`.execute(db);
  await sql`
    create trigger task_execution_created_events after insert on task_execution
    referencing new table as new_rows for each statement
    execute function trellis_task_events()`.execute(db);
  await sql`
    create trigger task_execution_changed_events after update on task_execution
    referencing old table as old_rows new table as new_rows for each statement
    execute function trellis_task_events()`.execute(db);
  await sql`
    create trigger approval_created_events after insert on approval
    referencing new table as new_rows for each statement
    execute function trellis_approval_events()`.execute(db);
  await sql`
    create trigger approval_changed_events after update on approval
    referencing old table as old_rows new table as new_rows for each statement
    execute function trellis_approval_events()`.execute(db);
  await sql`
    create trigger log_entry_created_events after insert on log_entry
    referencing new table as new_rows for each statement
    execute function trellis_log_events()`.execute(db);

  // Executions that ran before: their state as events (tasks, approvals, logs, then the
  // execution's status last), so their streams show them and end.
  await sql`
    insert into execution_event (execution_id, seq, type, data, log_entry_id)
    select execution_id,
           row_number() over (partition by execution_id order by grp, ord),
           type, data, log_entry_id
    from (
      select t.execution_id, 1 as grp, t.position::numeric as ord, 'task' as type,
             jsonb_build_object('taskExecutionId', t.id, 'name', t.name, 'status', t.status,
                                'message', t.message) as data,
             null::uuid as log_entry_id
        from task_execution t
      union all
      select a.execution_id, 2, extract(epoch from a.requested_at), 'approval',
             jsonb_build_object('id', a.id, 'taskExecutionId', a.task_execution_id,
                                'taskName', a.task_name, 'status', a.status,
                                'decidedBy', a.decided_by),
             null
        from approval a
      union all
      select l.execution_id, 3, l.seq, 'log', null, l.id from log_entry l
      union all
      select e.id, 4, 0, 'execution',
             jsonb_build_object('status', e.status, 'message', e.message), null
        from workflow_execution e
    ) as existing`.execute(db);
  await sql`
    insert into execution_event_sequence (execution_id, last_seq)
    select execution_id, max(seq) from execution_event group by execution_id`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [trigger, table] of [
    ['log_entry_created_events', 'log_entry'],
    ['approval_changed_events', 'approval'],
    ['approval_created_events', 'approval'],
    ['task_execution_changed_events', 'task_execution'],
    ['task_execution_created_events', 'task_execution'],
    ['workflow_execution_deleted_events', 'workflow_execution'],
    ['workflow_execution_status_event', 'workflow_execution'],
    ['workflow_execution_created_events', 'workflow_execution'],
  ] as const) {
    await sql`drop trigger ${sql.id(trigger)} on ${sql.id(table)}`.execute(db);
  }
  for (const name of [
    'trellis_execution_deleted',
    'trellis_execution_status_event',
    'trellis_execution_created_events',
    'trellis_log_events',
    'trellis_approval_events',
    'trellis_task_events',
    'trellis_append_execution_events',
  ]) {
    await sql`drop function ${sql.id(name)}`.execute(db);
  }
  await sql`drop table execution_event`.execute(db);
  await sql`drop table execution_event_sequence`.execute(db);
}
