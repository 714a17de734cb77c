import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/**
 * Remembers verified credentials for a short time so that a client sending the same
 * `Authorization` header on every request pays for scrypt or a signature check only now and then.
 * Keys are a hash of the header, never the header itself. Least recently used entries go first.
 */
export class CredentialCache<T> {
  readonly #entries: LRUCache<string, { value: T }>;
  readonly #ttlMs: number;

  constructor(maxEntries = 1000, ttlMs = 60_000) {
    // Date's clock, as `notAfter` (a token's expiry) is read on it.
    this.#entries = new LRUCache({ max: maxEntries, ttl: ttlMs, perf: Date });
    this.#ttlMs = ttlMs;
  }

  get(header: string): T | undefined {
    return this.#entries.get(CredentialCache.#key(header))?.value;
  }

  /** Caches `value` for the TTL, or until `notAfter` (epoch ms) when that comes sooner. */
  set(header: string, value: T, notAfter = Infinity): void {
    const key = CredentialCache.#key(header);
    const ttl = Math.min(this.#ttlMs, notAfter - Date.now());
    if (ttl > 0) this.#entries.set(key, { value }, { ttl });
    else this.#entries.delete(key);
  }

  static #key(header: string): string {
    return hash('sha256', header, 'base64url');
  }
}
