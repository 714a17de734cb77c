import { sql, type Kysely } from 'kysely';
import { NotFound } from '#definition/errors.js';
import { translateConstraintErrors } from './constraint-errors.js';
import { isUuid, newId } from './ids.js';
import type { Database, WorkflowTriggerRow, WorkflowTriggerTable } from './tables.js';

/** Workflow triggers; every lookup is scoped to its workflow, as the API paths are. */

export interface TriggerInput {
  type: WorkflowTriggerTable['type'];
  status: WorkflowTriggerTable['status'];
  properties: Record<string, unknown>;
  /** A Webhook trigger's signing secret, encrypted; null (the default) for none. */
  secret?: string | null;
  /** The user writing it, who becomes the starter of the runs it fires. */
  changedBy?: string | null;
}

/** A workflow's triggers, oldest first. */
export async function listByWorkflow(
  db: Kysely<Database>,
  workflowId: string,
): Promise<WorkflowTriggerRow[]> {
  if (!isUuid(workflowId)) return [];
  return db
    .selectFrom('workflowTrigger')
    .selectAll()
    .where('workflowId', '=', workflowId)
    .orderBy('createdAt')
    .orderBy('id')
    .execute();
}

export async function findById(
  db: Kysely<Database>,
  workflowId: string,
  triggerId: string,
): Promise<WorkflowTriggerRow | undefined> {
  if (!isUuid(workflowId) || !isUuid(triggerId)) return undefined;
  return db
    .selectFrom('workflowTrigger')
    .selectAll()
    .where('workflowId', '=', workflowId)
    .where('id', '=', triggerId)
    .executeTakeFirst();
}

/** A trigger by its id alone, whichever workflow it belongs to (a webhook's path names no workflow). */
export async function findAnywhere(
  db: Kysely<Database>,
  triggerId: string,
): Promise<WorkflowTriggerRow | undefined> {
  if (!isUuid(triggerId)) return undefined;
  return db
    .selectFrom('workflowTrigger')
    .selectAll()
    .where('id', '=', triggerId)
    .executeTakeFirst();
}

/** Adds a trigger to a workflow; `NotFound` when the workflow does not exist. */
export async function insert(
  db: Kysely<Database>,
  workflowId: string,
  input: TriggerInput,
): Promise<WorkflowTriggerRow> {
  const missingWorkflow = () => new NotFound(`Workflow ${workflowId} not found`);
  if (!isUuid(workflowId)) throw missingWorkflow();
  return translateConstraintErrors(
    () =>
      db
        .insertInto('workflowTrigger')
        .values({
          id: newId(),
          workflowId,
          ...input,
          properties: JSON.stringify(input.properties),
          secret: input.secret ?? null,
          lastModified: sql<Date>`now()`,
        })
        .returningAll()
        .executeTakeFirstOrThrow(),
    { foreignKey: missingWorkflow },
  );
}

/** Replaces type, status and properties and stamps `lastModified`; undefined when unknown. */
export async function update(
  db: Kysely<Database>,
  workflowId: string,
  triggerId: string,
  input: TriggerInput,
): Promise<WorkflowTriggerRow | undefined> {
  if (!isUuid(workflowId) || !isUuid(triggerId)) return undefined;
  return db
    .updateTable('workflowTrigger')
    .set({
      ...input,
      properties: JSON.stringify(input.properties),
      secret: input.secret ?? null,
      lastModified: sql<Date>`now()`,
    })
    .where('workflowId', '=', workflowId)
    .where('id', '=', triggerId)
    .returningAll()
    .executeTakeFirst();
}

/** Replaces a Webhook trigger's (encrypted) secret and stamps `lastModified`; false when unknown. */
export async function replaceSecret(
  db: Kysely<Database>,
  workflowId: string,
  triggerId: string,
  change: { secret: string; changedBy: string },
): Promise<boolean> {
  if (!isUuid(workflowId) || !isUuid(triggerId)) return false;
  const result = await db
    .updateTable('workflowTrigger')
    .set({ ...change, lastModified: sql<Date>`now()` })
    .where('workflowId', '=', workflowId)
    .where('id', '=', triggerId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Records `user` as who last changed the trigger (a backfill's requester), without touching
 * `lastModified`: the runs it fires from now on count them as their starter.
 */
export async function recordChangedBy(
  db: Kysely<Database>,
  workflowId: string,
  triggerId: string,
  user: string | null,
): Promise<void> {
  if (!isUuid(workflowId) || !isUuid(triggerId)) return;
  await db
    .updateTable('workflowTrigger')
    .set({ changedBy: user })
    .where('workflowId', '=', workflowId)
    .where('id', '=', triggerId)
    .execute();
}

/** Deletes a trigger; false when unknown. */
export async function remove(
  db: Kysely<Database>,
  workflowId: string,
  triggerId: string,
): Promise<boolean> {
  if (!isUuid(workflowId) || !isUuid(triggerId)) return false;
  const result = await db
    .deleteFrom('workflowTrigger')
    .where('workflowId', '=', workflowId)
    .where('id', '=', triggerId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Every TimeBased trigger, active or not: what the Temporal schedules must match at start-up. */
export async function listTimeBased(db: Kysely<Database>): Promise<WorkflowTriggerRow[]> {
  return db
    .selectFrom('workflowTrigger')
    .selectAll()
    .where('type', '=', 'TimeBased')
    .orderBy('createdAt')
    .orderBy('id')
    .execute();
}

/** The triggers of these workflows, each workflow's oldest first. */
export async function listByWorkflows(
  db: Kysely<Database>,
  workflowIds: string[],
): Promise<WorkflowTriggerRow[]> {
  if (workflowIds.length === 0) return [];
  return db
    .selectFrom('workflowTrigger')
    .selectAll()
    .where('workflowId', 'in', workflowIds)
    .orderBy('workflowId')
    .orderBy('createdAt')
    .orderBy('id')
    .execute();
}
