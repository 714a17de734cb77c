import type { Kysely, Selectable } from 'kysely';
import type { Database, IdempotencyKeyTable } from './tables.js';

/**
 * Idempotency keys (`Idempotency-Key`) of creating requests, per user and project (the same key in
 * another project is another request). A request claims its key
 * before it runs and records its response after; a repeat finds the claim. Keys live for
 * `keyLifetimeMs`: an older one is gone, and the key can be used afresh.
 */

export type IdempotencyKeyRow = Selectable<IdempotencyKeyTable>;

/** Whose key it is: a user's, in one project. */
export interface KeyOwner {
  userName: string;
  projectId: string;
  key: string;
}

/** How long a key is remembered. */
export const keyLifetimeMs = 24 * 60 * 60 * 1000;

/**
 * Claims a user's key in a project for a request. `claimed: true` when this request is the first
 * (within the key's lifetime); otherwise the existing claim, finished or not.
 */
export async function claimKey(
  db: Kysely<Database>,
  claim: KeyOwner & { requestHash: string },
): Promise<{ claimed: true } | { claimed: false; existing: IdempotencyKeyRow }> {
  // The user's expired keys go first, this one among them: the table holds a day of keys.
  await db
    .deleteFrom('idempotencyKey')
    .where('userName', '=', claim.userName)
    .where('createdAt', '<', new Date(Date.now() - keyLifetimeMs))
    .execute();
  const inserted = await db
    .insertInto('idempotencyKey')
    .values({
      userName: claim.userName,
      projectId: claim.projectId,
      key: claim.key,
      requestHash: claim.requestHash,
    })
    .onConflict((oc) => oc.columns(['userName', 'projectId', 'key']).doNothing())
    .returning('key')
    .executeTakeFirst();
  if (inserted) return { claimed: true };
  const existing = await findKey(db, claim);
  // Gone between the two statements (released by a failed first request): claim it again.
  if (!existing) return claimKey(db, claim);
  return { claimed: false, existing };
}

/** A user's key in a project, if it is remembered. */
export async function findKey(
  db: Kysely<Database>,
  owner: KeyOwner,
): Promise<IdempotencyKeyRow | undefined> {
  return db
    .selectFrom('idempotencyKey')
    .selectAll()
    .where('userName', '=', owner.userName)
    .where('projectId', '=', owner.projectId)
    .where('key', '=', owner.key)
    .where('createdAt', '>=', new Date(Date.now() - keyLifetimeMs))
    .executeTakeFirst();
}

/** Records the response of the request that claimed the key. */
export async function recordResponse(
  db: Kysely<Database>,
  claim: KeyOwner,
  response: { status: number; body: unknown },
): Promise<void> {
  await db
    .updateTable('idempotencyKey')
    .set({ responseStatus: response.status, response: JSON.stringify(response.body) })
    .where('userName', '=', claim.userName)
    .where('projectId', '=', claim.projectId)
    .where('key', '=', claim.key)
    .execute();
}

/**
 * Gives a key up: its request failed (and created nothing), or it was claimed long ago by a
 * request that never answered (its process died), given as `claimedBefore`.
 */
export async function releaseKey(
  db: Kysely<Database>,
  claim: KeyOwner,
  options: { claimedBefore?: Date } = {},
): Promise<void> {
  let query = db
    .deleteFrom('idempotencyKey')
    .where('userName', '=', claim.userName)
    .where('projectId', '=', claim.projectId)
    .where('key', '=', claim.key)
    .where('responseStatus', 'is', null);
  if (options.claimedBefore) query = query.where('createdAt', '<', options.claimedBefore);
  await query.execute();
}
