import { sql, type Kysely } from 'kysely';

// Frozen in time. An attempt cut short by its worker stopping is recorded as an attempt of its
// own: `interrupted_attempts` counts them (a task has run `attempts + interrupted_attempts`
// times; `attempts` stays the workflow's count, which orders its writes), and
// `attempt_start_time` is when the latest run of the current attempt began, so the run that
// finds an earlier one interrupted can tell that it is not its own and when it started. A task's
// events carry both counts.
/* eslint-disable @typescript-eslint/no-explicit-any */

const taskEvents = (withAttempts: boolean) => {
  const attempts = withAttempts
    ? sql`, 'attempts', n.attempts + n.interrupted_attempts, 'interruptedAttempts', n.interrupted_attempts`
    : sql``;
  const changed = withAttempts
    ? sql` or n.interrupted_attempts is distinct from o.interrupted_attempts`
    : sql``;
  return sql`
    create or replace function trellis_task_events() returns trigger language plpgsql as $$
    declare events jsonb;
    begin
      if tg_op = 'INSERT' then
        select jsonb_agg(jsonb_build_object(
                 'executionId', n.execution_id, 'ord', n.position, 'type', 'task',
                 'data', jsonb_build_object('taskExecutionId', n.id, 'name', n.name,
                                            'status', n.status, 'message', n.message,
                                            'startedAt', n.start_time, 'endedAt', n.end_time${attempts})))
          into events from new_rows n;
      else
        select jsonb_agg(jsonb_build_object(
                 'executionId', n.execution_id, 'ord', n.position, 'type', 'task',
                 'data', jsonb_build_object('taskExecutionId', n.id, 'name', n.name,
                                            'status', n.status, 'message', n.message,
                                            'startedAt', n.start_time, 'endedAt', n.end_time${attempts})))
          into events
          from new_rows n join old_rows o on o.id = n.id
         where n.status is distinct from o.status or n.message is distinct from o.message${changed};
      end if;
      if events is not null then perform trellis_append_execution_events(events); end if;
      return null;
    end $$`;
};

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('task_execution')
    .addColumn('interrupted_attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('attempt_start_time', 'timestamptz')
    .execute();
  await taskEvents(true).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await taskEvents(false).execute(db);
  await db.schema
    .alterTable('task_execution')
    .dropColumn('interrupted_attempts')
    .dropColumn('attempt_start_time')
    .execute();
}
