import { sql, type Kysely } from 'kysely';
import { newId } from './ids.js';
import { storableJson, storableText } from '#definition/storable-text.js';
import type { Database, TaskStatus } from './tables.js';

/**
 * The items of forEach tasks: one task row per item (`Task[3]`), created when the task's items
 * are evaluated, beside the task's own row and listed right after it. Writes are idempotent, so
 * an evaluation that runs again (a retried activity, a replay) creates nothing twice.
 */

/** 7 bind parameters a row: well under PostgreSQL's 65535 per statement. */
const CHUNK = 5000;

const FINISHED: TaskStatus[] = ['Completed', 'Failed', 'Skipped', 'Canceled'];

export interface ForEachTaskRow {
  id: string;
  executionId: string;
  workflowId: string;
  position: number;
}

/**
 * One Pending row per item, named by `nameOf(index)`, holding its item. An item row that exists
 * already (the evaluation ran before) keeps its state; a run reset from Temporal (`run`) takes
 * it over.
 */
export async function insertItems(
  db: Kysely<Database>,
  task: ForEachTaskRow,
  items: readonly unknown[],
  nameOf: (index: number) => string,
  run?: string,
): Promise<void> {
  const rows = items.map((item, index) => ({
    id: newId(),
    executionId: task.executionId,
    workflowId: task.workflowId,
    name: nameOf(index),
    position: task.position,
    status: 'Pending' as const,
    message: '',
    foreachTaskId: task.id,
    itemIndex: index,
    item: storableJson(item ?? null),
    temporalRunId: run ?? null,
  }));
  for (let start = 0; start < rows.length; start += CHUNK) {
    await db
      .insertInto('taskExecution')
      .values(rows.slice(start, start + CHUNK))
      .onConflict((oc) =>
        oc.columns(['executionId', 'name']).doUpdateSet((eb) => ({
          item: eb.ref('excluded.item'),
          foreachTaskId: eb.ref('excluded.foreachTaskId'),
          itemIndex: eb.ref('excluded.itemIndex'),
        })),
      )
      .execute();
  }
}

/** The row of a forEach task of an execution (its own row, not an item's). */
export async function findForEachTask(
  db: Kysely<Database>,
  taskExecutionId: string,
): Promise<ForEachTaskRow | undefined> {
  return db
    .selectFrom('taskExecution')
    .select(['id', 'executionId', 'workflowId', 'position'])
    .where('id', '=', taskExecutionId)
    .executeTakeFirst();
}

/** The row ids of items `from` (included) to `to` (excluded) of a forEach task, in order. */
export async function itemIds(
  db: Kysely<Database>,
  foreachTaskId: string,
  from: number,
  to: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('taskExecution')
    .select('id')
    .where('foreachTaskId', '=', foreachTaskId)
    .where('itemIndex', '>=', from)
    .where('itemIndex', '<', to)
    .orderBy('itemIndex')
    .execute();
  return rows.map((row) => row.id);
}

/** The item an item row holds (null when the row is not an item's). */
export async function itemValue(db: Kysely<Database>, itemTaskId: string): Promise<unknown> {
  const row = await db
    .selectFrom('taskExecution')
    .select('item')
    .where('id', '=', itemTaskId)
    .executeTakeFirst();
  return row?.item ?? null;
}

export interface ItemOutcome {
  index: number;
  name: string;
  status: TaskStatus;
  message: string;
  output: unknown;
}

/** What became of every item of a forEach task, in order. */
export async function itemOutcomes(
  db: Kysely<Database>,
  foreachTaskId: string,
): Promise<ItemOutcome[]> {
  const rows = await db
    .selectFrom('taskExecution')
    .select(['itemIndex', 'name', 'status', 'message', 'output'])
    .where('foreachTaskId', '=', foreachTaskId)
    .orderBy('itemIndex')
    .execute();
  return rows.map((row) => ({
    index: row.itemIndex ?? 0,
    name: row.name,
    status: row.status,
    message: row.message,
    output: row.output ?? null,
  }));
}

/**
 * Ends every item of a forEach task that has not finished (not started, or stopped without
 * recording it) with `status`, giving each its start and end time.
 */
export async function endUnfinishedItems(
  db: Kysely<Database>,
  foreachTaskId: string,
  outcome: { status: Extract<TaskStatus, 'Skipped' | 'Canceled'>; message: string; at: Date },
): Promise<void> {
  await db
    .updateTable('taskExecution')
    .set({
      status: outcome.status,
      message: storableText(outcome.message),
      startTime: sql<Date>`coalesce(start_time, ${outcome.at})`,
      endTime: sql<Date>`coalesce(end_time, ${outcome.at})`,
    })
    .where('foreachTaskId', '=', foreachTaskId)
    .where('status', 'not in', FINISHED)
    .execute();
}
