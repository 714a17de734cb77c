import { sql, type Kysely } from 'kysely';
import { Invalid } from '#definition/errors.js';
import { problemAt } from '#definition/validation/problem.js';
import type { Database, ExecutionStatus } from './tables.js';

/**
 * Webhook deliveries received, one per trigger and `webhook-id`: the first starts an execution,
 * a redelivery finds it here instead of starting another. The primary key makes that hold across
 * API processes.
 */

export interface Delivery {
  triggerId: string;
  webhookId: string;
  executionId: string;
}

/** The execution a delivery with this `webhook-id` started; undefined for a new one. */
export async function findDelivery(
  db: Kysely<Database>,
  triggerId: string,
  webhookId: string,
): Promise<Delivery | undefined> {
  return db
    .selectFrom('webhookDelivery')
    .select(['triggerId', 'webhookId', 'executionId'])
    .where('triggerId', '=', triggerId)
    .where('webhookId', '=', webhookId)
    .executeTakeFirst();
}

/**
 * Records that a delivery started an execution. False when another delivery with the same
 * `webhook-id` was recorded first (a concurrent insert waits for that one's transaction).
 */
export async function recordDelivery(db: Kysely<Database>, delivery: Delivery): Promise<boolean> {
  const inserted = await db
    .insertInto('webhookDelivery')
    .values(delivery)
    .onConflict((oc) => oc.columns(['triggerId', 'webhookId']).doNothing())
    .returning('executionId')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Forgets a delivery whose execution could not start, so that the sender's retry starts one. */
export async function forgetDelivery(db: Kysely<Database>, delivery: Delivery): Promise<void> {
  await db
    .deleteFrom('webhookDelivery')
    .where('triggerId', '=', delivery.triggerId)
    .where('webhookId', '=', delivery.webhookId)
    .where('executionId', '=', delivery.executionId)
    .execute();
}

/** A delivery as its trigger's log lists it, with its execution's status now. */
export interface LoggedDelivery {
  webhookId: string;
  receivedAt: Date;
  executionId: string;
  executionStatus: ExecutionStatus;
}

/**
 * A trigger's deliveries, newest first (ties by `webhook-id`), `limit` of them after the one
 * whose `webhook-id` is `after` (keyset paging on the trigger's received-at index). A cursor that
 * names none of the trigger's deliveries is `Invalid`.
 */
export async function listDeliveries(
  db: Kysely<Database>,
  triggerId: string,
  page: { after?: string; limit: number },
): Promise<LoggedDelivery[]> {
  const { after } = page;
  if (after !== undefined) {
    const cursor = await db
      .selectFrom('webhookDelivery')
      .select('webhookId')
      .where('triggerId', '=', triggerId)
      .where('webhookId', '=', after)
      .executeTakeFirst();
    if (!cursor) {
      throw new Invalid(
        problemAt('query.after', `must be the id of a delivery of this trigger (${after} is not)`),
      );
    }
  }
  return db
    .selectFrom('webhookDelivery as d')
    .innerJoin('workflowExecution as e', 'e.id', 'd.executionId')
    .select(['d.webhookId', 'd.receivedAt', 'd.executionId', 'e.status as executionStatus'])
    .where('d.triggerId', '=', triggerId)
    .$if(after !== undefined, (q) =>
      q.where(
        (eb) =>
          sql<boolean>`(${eb.ref('d.receivedAt')}, ${eb.ref('d.webhookId')}) < (${eb
            .selectFrom('webhookDelivery as cursor')
            .select(['cursor.receivedAt', 'cursor.webhookId'])
            .where('cursor.triggerId', '=', triggerId)
            .where('cursor.webhookId', '=', after!)})`,
      ),
    )
    .orderBy('d.receivedAt', 'desc')
    .orderBy('d.webhookId', 'desc')
    .limit(page.limit)
    .execute();
}
