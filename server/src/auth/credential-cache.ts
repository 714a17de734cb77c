import { hash } from 'node:crypto';

/**
 * Remembers verified credentials for a short time so that a client sending the same
 * `Authorization` header on every request pays for scrypt or a signature check only now and then.
 * Keys are a hash of the header, never the header itself. Least recently used entries go first.
 */
export class CredentialCache<T> {
  readonly #entries = new Map<string, { value: T; expiresAt: number }>();

  constructor(
    private readonly maxEntries = 1000,
    private readonly ttlMs = 60_000,
  ) {}

  get(header: string): T | undefined {
    const key = CredentialCache.#key(header);
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    if (entry.expiresAt <= Date.now()) return undefined;
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Caches `value` for the TTL, or until `notAfter` (epoch ms) when that comes sooner. */
  set(header: string, value: T, notAfter = Infinity): void {
    const key = CredentialCache.#key(header);
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: Math.min(Date.now() + this.ttlMs, notAfter) });
    while (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  static #key(header: string): string {
    return hash('sha256', header, 'base64url');
  }
}
