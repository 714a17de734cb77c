import { sql, type Kysely } from 'kysely';

// Frozen in time. Every change to the installed plugins (install, upgrade, uninstall, a built-in
// refreshed in place) notifies channel `trellis_plugins`, so that API processes holding what is
// installed in memory (to check definitions without a query) forget it at once.
/* eslint-disable @typescript-eslint/no-explicit-any */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function notify_plugin_changes() returns trigger language plpgsql as $$
    begin
      perform pg_notify('trellis_plugins', '');
      return null;
    end $$`.execute(db);
  await sql`
    create trigger plugin_changed after insert or update or delete or truncate on plugin
    for each statement execute function notify_plugin_changes()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger plugin_changed on plugin`.execute(db);
  await sql`drop function notify_plugin_changes()`.execute(db);
}
