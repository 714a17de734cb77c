import type { Kysely } from 'kysely';

// Frozen in time. A Temporal run reset by an operator (Temporal UI or CLI) runs again the tasks
// after its reset point: it takes the execution, and each task and approval it writes, over from
// the run before it. These columns name the reset run that did; null: the execution's first run.
/* eslint-disable @typescript-eslint/no-explicit-any */

const tables = ['workflow_execution', 'task_execution', 'approval'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of tables) {
    await db.schema.alterTable(table).addColumn('temporal_run_id', 'text').execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of tables) {
    await db.schema.alterTable(table).dropColumn('temporal_run_id').execute();
  }
}
