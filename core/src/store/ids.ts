import { createHash, randomUUID } from 'node:crypto';

/** A new row id. Ids are generated here, not by the database, so no extension is needed. */
export function newId(): string {
  return randomUUID();
}

/** The namespace of `derivedId` (a UUID of its own, as RFC 9562 asks of name-based ids). */
const derivedIdNamespace = Buffer.from('5d0c4f9a3b7e4e21a8f0c6d2b1e97a43', 'hex');

/**
 * A row id derived from a name (a UUID version 5, RFC 9562): the same name always gives the
 * same id, so a step that is retried creates the same row again, not a second one.
 */
export function derivedId(name: string): string {
  const hash = createHash('sha1').update(derivedIdNamespace).update(name).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * True for a UUID in canonical text form. Lookups use it to answer "not found" for a malformed
 * id instead of letting PostgreSQL reject the cast.
 */
export function isUuid(value: string): boolean {
  return uuidPattern.test(value);
}
