import type { Kysely } from 'kysely';
import { Invalid } from '#definition/errors.js';
import { problemAt } from '#definition/validation/problem.js';
import { isUuid, newId } from './ids.js';
import { keysetPage, paginate, type Paged, type Slice } from './paging.js';
import { storableText } from '#definition/storable-text.js';
import type { Database, NotificationDeliveryTable, NotificationEvent } from './tables.js';
import type { Selectable } from 'kysely';

/**
 * Notifications (`Notifications.Webhooks`): one row per attempt to deliver an event to a
 * webhook, written by the worker's delivery activity; and the approval links sent with
 * `ApprovalRequested` events, each deciding its approval once until it expires.
 */

export type DeliveryRow = Selectable<NotificationDeliveryTable>;

export interface DeliveryAttempt {
  eventId: string;
  event: NotificationEvent;
  url: string;
  executionId: string;
  approvalId: string | null;
  attempt: number;
  outcome: DeliveryRow['outcome'];
  statusCode: number | null;
  error: string | null;
  at?: Date;
}

/** Records one attempt; an attempt recorded already (a retried write) is kept as it was. */
export async function recordDeliveryAttempt(
  db: Kysely<Database>,
  attempt: DeliveryAttempt,
): Promise<void> {
  await db
    .insertInto('notificationDelivery')
    .values({
      id: newId(),
      eventId: attempt.eventId,
      event: attempt.event,
      url: attempt.url,
      executionId: attempt.executionId,
      approvalId: attempt.approvalId,
      attempt: attempt.attempt,
      outcome: attempt.outcome,
      statusCode: attempt.statusCode,
      error: attempt.error === null ? null : storableText(attempt.error.slice(0, 2000)),
      attemptedAt: attempt.at ?? new Date(),
    })
    .onConflict((oc) => oc.columns(['eventId', 'attempt']).doNothing())
    .execute();
}

/**
 * Delivery attempts, newest first, optionally of one event or one execution: a numbered page, the
 * attempts after one of them (keyset paging on `seq`), or all. An `after` that is not an attempt
 * of the list is refused, as the end of the list would otherwise look the same.
 */
export async function listDeliveries(
  db: Kysely<Database>,
  filter: { projectId?: string; eventId?: string; executionId?: string; slice?: Slice },
): Promise<Paged<DeliveryRow>> {
  const { slice = {} } = filter;
  const listed = (q: ReturnType<typeof db.selectFrom<'notificationDelivery'>>) =>
    q
      .$if(filter.projectId !== undefined, (qb) =>
        qb.where('executionId', 'in', (eb) =>
          eb
            .selectFrom('workflowExecution')
            .select('id')
            .where('projectId', '=', filter.projectId!),
        ),
      )
      .$if(filter.eventId !== undefined, (qb) => qb.where('eventId', '=', filter.eventId!))
      .$if(filter.executionId !== undefined, (qb) =>
        qb.where('executionId', '=', filter.executionId!),
      );
  const query = listed(db.selectFrom('notificationDelivery')).selectAll().orderBy('seq', 'desc');
  if (!('after' in slice)) return paginate(query, 'page' in slice ? slice.page : undefined);
  const unknownCursor = () =>
    new Invalid(
      problemAt(
        'query.after',
        `must be the id of a delivery attempt of this list (${slice.after} is not)`,
      ),
    );
  if (!isUuid(slice.after)) throw unknownCursor();
  const cursor = await listed(db.selectFrom('notificationDelivery'))
    .select('seq')
    .where('id', '=', slice.after)
    .executeTakeFirst();
  if (!cursor) throw unknownCursor();
  const items = await query.where('seq', '<', cursor.seq).limit(slice.pageSize).execute();
  return keysetPage(items, slice.pageSize);
}

/** The approval link of a notification event: made once, the same on every retry. */
export async function ensureApprovalLink(
  db: Kysely<Database>,
  input: { eventId: string; approvalId: string; expiresAt: Date },
): Promise<{ id: string; approvalId: string; expiresAt: Date }> {
  await db
    .insertInto('approvalLink')
    .values({ id: newId(), ...input, usedAt: null })
    .onConflict((oc) => oc.column('eventId').doNothing())
    .execute();
  return db
    .selectFrom('approvalLink')
    .select(['id', 'approvalId', 'expiresAt'])
    .where('eventId', '=', input.eventId)
    .executeTakeFirstOrThrow();
}

export async function findApprovalLink(db: Kysely<Database>, id: string) {
  return db.selectFrom('approvalLink').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Marks the link used, unless it was already: true when this call did. */
export async function claimApprovalLink(db: Kysely<Database>, id: string): Promise<boolean> {
  const claimed = await db
    .updateTable('approvalLink')
    .set({ usedAt: new Date() })
    .where('id', '=', id)
    .where('usedAt', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return claimed !== undefined;
}

/** Makes a claimed link usable again: the decision it was claimed for did not happen. */
export async function releaseApprovalLink(db: Kysely<Database>, id: string): Promise<void> {
  await db.updateTable('approvalLink').set({ usedAt: null }).where('id', '=', id).execute();
}

/** A secret of the server's, made at random the first time any process asks for it. */
export async function serverSecret(
  db: Kysely<Database>,
  name: string,
  generate: () => string,
): Promise<string> {
  await db
    .insertInto('serverSecret')
    .values({ name, value: generate() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db
    .selectFrom('serverSecret')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.value;
}
