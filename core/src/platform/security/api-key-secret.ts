import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

/**
 * API keys as sent and stored: `trellis_<lookup id>_<secret>`. The fixed `trellis_` start and the
 * fixed lengths let secret scanners recognise a leaked key; the lookup id (public, shown in lists
 * as the key's `prefix`) finds its row; the secret carries 256 bits of randomness. Only the
 * SHA-256 of the whole key is stored: a key is random and long, so a slow hash would add nothing
 * but cost to every request.
 */

export const apiKeyStart = 'trellis_';

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const lookupIdLength = 12;
/** 43 characters of 62: 256 bits. */
const secretLength = 43;
const keyPattern = new RegExp(
  `^${apiKeyStart}([A-Za-z0-9]{${lookupIdLength}})_[A-Za-z0-9]{${secretLength}}$`,
);

const randomText = (length: number) =>
  Array.from({ length }, () => alphabet[randomInt(alphabet.length)]).join('');

/** A new key, its lookup id and the hash to store. */
export function newApiKey(): { key: string; lookupId: string; hash: Buffer } {
  const lookupId = randomText(lookupIdLength);
  const key = `${apiKeyStart}${lookupId}_${randomText(secretLength)}`;
  return { key, lookupId, hash: apiKeyHash(key) };
}

/** Whether a Bearer token is meant as an API key (by its start; it may still be malformed). */
export function looksLikeApiKey(token: string): boolean {
  return token.startsWith(apiKeyStart);
}

/** The lookup id of a well-formed key; undefined for anything else. */
export function lookupIdOf(key: string): string | undefined {
  return keyPattern.exec(key)?.[1];
}

/** How the names API keys act under start: no Basic name has a `:`, no token's name this start. */
export const apiKeyCallerStart = 'key:';

/** The name a key acts under (audit entries, `createdBy`, `/me`): `key:<project>/<key name>`. */
export const apiKeyCallerName = (projectName: string, keyName: string): string =>
  `${apiKeyCallerStart}${projectName}/${keyName}`;

/** The key's public part, as lists show it: `trellis_<lookup id>`. */
export const apiKeyPrefix = (lookupId: string): string => `${apiKeyStart}${lookupId}`;

export function apiKeyHash(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** Whether `key` is the one `hash` was made of, compared in constant time. */
export function matchesApiKey(key: string, hash: Buffer): boolean {
  const given = apiKeyHash(key);
  return given.length === hash.length && timingSafeEqual(given, hash);
}
