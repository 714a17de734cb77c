/**
 * Approval links: `<linkId>.<expires>.<signature>`, the signature an HMAC-SHA256 (under a secret
 * the server keeps in PostgreSQL, shared by every process) of the link's id, the approval it is
 * bound to and when it expires. The token is the credential: whoever holds it may decide that one
 * approval, once (the link row records its use), until it expires.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import * as notificationRepository from '#store/notification-repository.js';
import type { Database } from '#store/tables.js';
import { isUuid } from '#store/ids.js';

const secretName = 'approval-links';
const secrets = new WeakMap<object, Promise<string>>();

function linkSecret(db: Kysely<Database>): Promise<string> {
  let secret = secrets.get(db);
  if (!secret) {
    secret = notificationRepository.serverSecret(db, secretName, () =>
      randomBytes(32).toString('base64url'),
    );
    secret.catch(() => secrets.delete(db));
    secrets.set(db, secret);
  }
  return secret;
}

function signature(secret: string, id: string, approvalId: string, expires: number): string {
  return createHmac('sha256', secret).update(`${id}.${approvalId}.${expires}`).digest('base64url');
}

/** The token of an `ApprovalRequested` event's link (made once per event). */
export async function approvalLinkToken(
  db: Kysely<Database>,
  input: { eventId: string; approvalId: string; expiresAt: Date },
): Promise<{ token: string; expiresAt: Date }> {
  const link = await notificationRepository.ensureApprovalLink(db, input);
  const expires = Math.floor(link.expiresAt.getTime() / 1000);
  const secret = await linkSecret(db);
  return {
    token: `${link.id}.${expires}.${signature(secret, link.id, link.approvalId, expires)}`,
    expiresAt: link.expiresAt,
  };
}

export type LinkCheck =
  | { ok: true; linkId: string; approvalId: string; eventId: string; expiresAt: Date }
  | { ok: false; reason: 'forged' | 'expired' | 'used' };

/** What a token is: a valid link's approval, or why it is not one (forged, expired, used). */
export async function checkApprovalLink(
  db: Kysely<Database>,
  token: string,
  now = new Date(),
): Promise<LinkCheck> {
  const [id, expiresText, given, ...rest] = token.split('.');
  if (
    !id ||
    !expiresText ||
    !given ||
    rest.length > 0 ||
    !isUuid(id) ||
    !/^\d{1,12}$/.test(expiresText)
  ) {
    return { ok: false, reason: 'forged' };
  }
  const link = await notificationRepository.findApprovalLink(db, id);
  if (!link) return { ok: false, reason: 'forged' };
  const expires = Number(expiresText);
  const expected = Buffer.from(signature(await linkSecret(db), id, link.approvalId, expires));
  const actual = Buffer.from(given);
  if (
    actual.length !== expected.length ||
    !timingSafeEqual(actual, expected) ||
    expires !== Math.floor(link.expiresAt.getTime() / 1000)
  ) {
    return { ok: false, reason: 'forged' };
  }
  if (link.usedAt !== null) return { ok: false, reason: 'used' };
  if (link.expiresAt.getTime() <= now.getTime()) return { ok: false, reason: 'expired' };
  return {
    ok: true,
    linkId: link.id,
    approvalId: link.approvalId,
    eventId: link.eventId,
    expiresAt: link.expiresAt,
  };
}

/**
 * A token as logs may show it: its link id and expiry, to correlate, without the signature that
 * makes it a credential. What is not a token's shape is shown as `…` whole.
 */
export function withoutLinkSignature(token: string): string {
  const [id, expires] = token.split('.');
  return id !== undefined && expires !== undefined && isUuid(id) && /^\d{1,12}$/.test(expires)
    ? `${id}.${expires}.…`
    : '…';
}
