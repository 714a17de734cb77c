import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import * as idempotencyRepository from '#store/idempotency-repository.js';
import type { Database } from '#store/tables.js';
import { Conflict } from '#definition/errors.js';

/** The header; operations that declare it in the contract honour it. */
export const idempotencyHeader = 'Idempotency-Key';

/** A response as sent: what a repeat of the request gets again. */
export interface SentResponse {
  status: number;
  body: unknown;
}

/** How long a repeat waits for the first request to answer before it is told to retry. */
const waitForFirstMs = 10_000;
/** A claim this old without a response belongs to a request that will never answer. */
const abandonedAfterMs = 120_000;

/**
 * Runs a creating request at most once per user, project and key: the first request with
 * a key runs and its response is kept; a repeat with the same fingerprint (operation, parameters
 * and body) gets that response again and creates nothing; a repeat with another fingerprint is
 * 409. A first request that fails creates nothing and keeps no response, so it can be retried.
 */
export async function runIdempotently(
  db: Kysely<Database>,
  request: { userName: string; projectId: string; key: string; fingerprint: unknown },
  run: () => Promise<SentResponse>,
): Promise<SentResponse & { replayed: boolean }> {
  const claim = {
    userName: request.userName,
    projectId: request.projectId,
    key: request.key,
    requestHash: hashOf(request.fingerprint),
  };
  const deadline = Date.now() + waitForFirstMs;
  for (;;) {
    const outcome = await idempotencyRepository.claimKey(db, claim);
    if (outcome.claimed) break;
    const { existing } = outcome;
    if (existing.requestHash !== claim.requestHash) {
      throw new Conflict(
        `Idempotency-Key "${claim.key}" was already used for a different request; use a new key for a new request.`,
        { code: 'idempotency.key_reused' },
      );
    }
    if (existing.responseStatus !== null) {
      return { status: existing.responseStatus, body: existing.response, replayed: true };
    }
    if (existing.createdAt.getTime() < Date.now() - abandonedAfterMs) {
      await idempotencyRepository.releaseKey(db, claim, {
        claimedBefore: new Date(Date.now() - abandonedAfterMs),
      });
      continue;
    }
    if (Date.now() > deadline) {
      throw new Conflict(
        `A request with Idempotency-Key "${claim.key}" is still being processed; retry it later.`,
        { code: 'idempotency.in_progress' },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  let response: SentResponse;
  try {
    response = await run();
  } catch (error) {
    await idempotencyRepository.releaseKey(db, claim);
    throw error;
  }
  await idempotencyRepository.recordResponse(db, claim, response);
  return { ...response, replayed: false };
}

/** sha256 of a JSON value with its object keys sorted, so key order does not matter. */
function hashOf(value: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(sorted(value)))
    .digest('hex');
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
  );
}
