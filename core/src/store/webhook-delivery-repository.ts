import { sql, type Kysely, type RawBuilder } from 'kysely';
import { Invalid } from '#definition/errors.js';
import { problemAt } from '#definition/validation/problem.js';
import type { Database, ExecutionStatus } from './tables.js';
import { isUuid, newId } from './ids.js';

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

/** How many refused deliveries a trigger keeps: the newest; an older one goes as a new one comes. */
export const refusalsKeptPerTrigger = 100;

/** A delivery its trigger refused: why, never its body. */
export interface Refusal {
  triggerId: string;
  webhookId: string | null;
  status: number;
  code: string;
  reason: string;
}

/**
 * Records a refused delivery and forgets the trigger's refusals beyond the newest
 * {@link refusalsKeptPerTrigger}, so that a sender without the secret cannot grow the table.
 */
export async function recordRefusal(db: Kysely<Database>, refusal: Refusal): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('webhookRefusal')
      .values({ id: newId(), ...refusal })
      .execute();
    await trx
      .deleteFrom('webhookRefusal')
      .where('triggerId', '=', refusal.triggerId)
      .where('id', 'not in', (eb) =>
        eb
          .selectFrom('webhookRefusal')
          .select('id')
          .where('triggerId', '=', refusal.triggerId)
          .orderBy('receivedAt', 'desc')
          .orderBy('id', 'desc')
          .limit(refusalsKeptPerTrigger),
      )
      .execute();
  });
}

/** A delivery as its trigger's log lists it: accepted, with its execution's status now, or refused, with why. */
export type LoggedDelivery =
  | {
      outcome: 'Accepted';
      id: string;
      webhookId: string;
      receivedAt: Date;
      executionId: string;
      executionStatus: ExecutionStatus;
    }
  | {
      outcome: 'Refused';
      id: string;
      webhookId: string | null;
      receivedAt: Date;
      status: number;
      code: string;
      reason: string;
    };

/**
 * Where a page starts: the entry a cursor names, its time as the database holds it (text, to the
 * microsecond) and its id as the list orders them.
 */
async function cursorOf(db: Kysely<Database>, triggerId: string, after: string) {
  const accepted = await db
    .selectFrom('webhookDelivery')
    .select([sql<string>`received_at::text`.as('at'), 'webhookId as id'])
    .where('triggerId', '=', triggerId)
    .where('webhookId', '=', after)
    .executeTakeFirst();
  if (accepted) return accepted;
  const refused = isUuid(after)
    ? await db
        .selectFrom('webhookRefusal')
        .select([sql<string>`received_at::text`.as('at'), sql<string>`id::text`.as('id')])
        .where('triggerId', '=', triggerId)
        .where('id', '=', after)
        .executeTakeFirst()
    : undefined;
  if (refused) return refused;
  throw new Invalid(
    problemAt('query.after', `must be the id of a delivery of this trigger (${after} is not)`),
  );
}

interface LogRow {
  outcome: 'Accepted' | 'Refused';
  id: string;
  webhookId: string | null;
  receivedAt: Date;
  executionId: string | null;
  executionStatus: ExecutionStatus | null;
  status: number | null;
  code: string | null;
  reason: string | null;
}

/**
 * A trigger's deliveries, accepted and refused, newest first (ties by id), `limit` of them after
 * the one whose id is `after`: an accepted delivery's `webhook-id`, a refused one's own id. Each
 * table is read a page at most along its received-at index, and the two pages merged. A cursor
 * that names none of the trigger's deliveries is `Invalid`.
 */
export async function listDeliveries(
  db: Kysely<Database>,
  triggerId: string,
  page: { after?: string; limit: number },
): Promise<LoggedDelivery[]> {
  const cursor = page.after === undefined ? undefined : await cursorOf(db, triggerId, page.after);
  const after = (at: RawBuilder<unknown>, id: RawBuilder<unknown>) =>
    cursor ? sql`and (${at}, ${id}) < (${cursor.at}::timestamptz, ${cursor.id})` : sql``;
  const { rows } = await sql<LogRow>`
    select * from (
      (select 'Accepted' as outcome, d.webhook_id as id, d.webhook_id, d.received_at,
              d.execution_id, e.status as execution_status,
              null::integer as status, null::text as code, null::text as reason
         from webhook_delivery d join workflow_execution e on e.id = d.execution_id
        where d.trigger_id = ${triggerId} ${after(sql`d.received_at`, sql`d.webhook_id`)}
        order by d.received_at desc, d.webhook_id desc
        limit ${page.limit})
      union all
      (select 'Refused', r.id::text, r.webhook_id, r.received_at,
              null, null, r.status, r.code, r.reason
         from webhook_refusal r
        where r.trigger_id = ${triggerId} ${after(sql`r.received_at`, sql`r.id::text`)}
        order by r.received_at desc, r.id desc
        limit ${page.limit})
    ) entries
    order by received_at desc, id desc
    limit ${page.limit}
  `.execute(db);
  return rows.map((row): LoggedDelivery => {
    const { id, receivedAt } = row;
    return row.outcome === 'Accepted'
      ? {
          outcome: 'Accepted',
          id,
          webhookId: id,
          receivedAt,
          executionId: row.executionId!,
          executionStatus: row.executionStatus!,
        }
      : {
          outcome: 'Refused',
          id,
          webhookId: row.webhookId,
          receivedAt,
          status: row.status!,
          code: row.code!,
          reason: row.reason!,
        };
  });
}
