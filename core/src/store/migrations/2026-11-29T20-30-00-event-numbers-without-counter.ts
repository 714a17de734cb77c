import { sql, type Kysely } from 'kysely';
import {
  appendEventsWithCounterRow,
  createCounterTable,
} from './2026-11-25T00-00-00-execution-events.js';

// Frozen in time. An execution's events are still numbered 1, 2, 3... in commit order, without
// the counter row each transaction used to update (one row written per statement that added
// events: a fifth of a three-task run's rows). A transaction that adds events to an execution now
// takes a transaction-wide advisory lock of it first (executions in order) and numbers on from
// the execution's highest event, one step down the event table's primary key. The lock is
// released only once the transaction's events are visible, so the next holder reads them: the
// order the counter row's lock gave, and as with it, writers of different executions never wait
// for each other. A statement writing the events of more than 1,000 executions at once (a bulk
// insert of 100,000 runs) would exhaust PostgreSQL's lock table with one lock each: it locks the
// event table against every other writer instead (SHARE ROW EXCLUSIVE), which the others' ROW
// EXCLUSIVE lock, taken before their advisory locks, waits for. The two-key form keeps these
// advisory locks apart from the single-key ones of the rest of Trellis.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function trellis_append_execution_events(events jsonb) returns void
    language plpgsql as $$
    declare
      executions integer;
    begin
      select count(distinct e ->> 'executionId') into executions
      from jsonb_array_elements(events) as e;
      if executions > 1000 then
        lock table execution_event in share row exclusive mode;
      else
        lock table execution_event in row exclusive mode;
        perform pg_advisory_xact_lock(hashtext('trellis.execution_event'), hashtext(id))
        from (select distinct e ->> 'executionId' as id from jsonb_array_elements(events) as e
              order by 1) as ids;
      end if;
      -- A statement of its own, after the locks: it sees what their last holders committed.
      with rows as (
        select (e ->> 'executionId')::uuid as execution_id, (e ->> 'ord')::numeric as ord,
               e ->> 'type' as type, e -> 'data' as data, (e ->> 'logEntryId')::uuid as log_entry_id
        from jsonb_array_elements(events) as e
      ),
      latest as (
        select ids.execution_id,
               coalesce((select max(x.seq) from execution_event x
                         where x.execution_id = ids.execution_id), 0) as last_seq
        from (select distinct execution_id from rows) as ids
      )
      insert into execution_event (execution_id, seq, type, data, log_entry_id)
      select r.execution_id,
             latest.last_seq + row_number() over (partition by r.execution_id order by r.ord),
             r.type, r.data, r.log_entry_id
      from rows r join latest using (execution_id);
      perform pg_notify('trellis_execution_events', execution_id::text)
      from (select distinct (e ->> 'executionId') as execution_id from jsonb_array_elements(events) as e) as ids;
    end $$`.execute(db);
  await sql`drop table execution_event_sequence`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await createCounterTable.execute(db);
  await sql`
    insert into execution_event_sequence (execution_id, last_seq)
    select execution_id, max(seq) from execution_event
    where execution_id in (select id from workflow_execution)
    group by execution_id`.execute(db);
  await appendEventsWithCounterRow.execute(db);
}
