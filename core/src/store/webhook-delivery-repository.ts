import type { Kysely } from 'kysely';
import type { Database } from './tables.js';

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
