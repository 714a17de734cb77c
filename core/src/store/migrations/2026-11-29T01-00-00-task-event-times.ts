import { sql, type Kysely } from 'kysely';

// Frozen in time. A task's events carry the task's own start and end times (task_execution's
// start_time and end_time), so that a page following the stream shows the durations a reload
// reads from the task, not the moments the events were recorded.
/* eslint-disable @typescript-eslint/no-explicit-any */

const taskEvents = (withTimes: boolean) => {
  const times = withTimes ? sql`, 'startedAt', n.start_time, 'endedAt', n.end_time` : sql``;
  return sql`
    create or replace function trellis_task_events() returns trigger language plpgsql as $$
    declare events jsonb;
    begin
      if tg_op = 'INSERT' then
        select jsonb_agg(jsonb_build_object(
                 'executionId', n.execution_id, 'ord', n.position, 'type', 'task',
                 'data', jsonb_build_object('taskExecutionId', n.id, 'name', n.name,
                                            'status', n.status, 'message', n.message${times})))
          into events from new_rows n;
      else
        select jsonb_agg(jsonb_build_object(
                 'executionId', n.execution_id, 'ord', n.position, 'type', 'task',
                 'data', jsonb_build_object('taskExecutionId', n.id, 'name', n.name,
                                            'status', n.status, 'message', n.message${times})))
          into events
          from new_rows n join old_rows o on o.id = n.id
         where n.status is distinct from o.status or n.message is distinct from o.message;
      end if;
      if events is not null then perform trellis_append_execution_events(events); end if;
      return null;
    end $$`;
};

export async function up(db: Kysely<any>): Promise<void> {
  await taskEvents(true).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await taskEvents(false).execute(db);
}
