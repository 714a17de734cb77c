import { randomUUID } from 'node:crypto';

/** A new row id. Ids are generated here, not by the database, so no extension is needed. */
export function newId(): string {
  return randomUUID();
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * True for a UUID in canonical text form. Lookups use it to answer "not found" for a malformed
 * id instead of letting PostgreSQL reject the cast.
 */
export function isUuid(value: string): boolean {
  return uuidPattern.test(value);
}
