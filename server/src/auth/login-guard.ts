import type { Kysely } from 'kysely';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { clearFailures, failureState, recordFailure } from '#store/auth-failure-repository.js';
import type { Database } from '#store/tables.js';
import type { TrellisConfig } from '#platform/config/types.js';
import type { Logger } from '#platform/logging.js';
import { HttpError } from '../http-error.js';

/**
 * Abuse limits on authentication (`Security.RateLimits`, OWASP API2 and API4):
 *
 * - failed logins for one user name lock that name for the window, the right password included;
 * - failed logins from one client address, across names, lock that address (a higher limit);
 * - each authenticated user may make so many requests a minute.
 *
 * Failures and locks are in PostgreSQL, so they hold across API processes; a lock this process
 * set or saw is also kept in memory, so that a request whose credentials are already verified
 * (cached, no database query) is refused too. The request rate is counted per process: counting
 * it in the database would add a write to every request (N processes allow N times the rate).
 */
export interface LoginGuard {
  /** Refuses (429) a login for `name` (null: not known, e.g. a token) from `address` when locked. */
  beforeVerifying(name: string | null, address: string): Promise<{ hadFailures: boolean }>;
  /**
   * The user-name refusal for credentials verified earlier, from memory only (no query). An
   * address lock does not end logins verified before it: people behind the same NAT as an
   * attacker keep working.
   */
  beforeCached(name: string): void;
  /** Counts a failed login; logs at warn when it locks the name or the address. */
  failed(name: string | null, address: string): Promise<void>;
  /** A login succeeded: the name's failures are forgotten. */
  succeeded(name: string, hadFailures: boolean): Promise<void>;
  /** Counts a request of an authenticated user; 429 beyond the per-minute limit. */
  request(name: string): Promise<void>;
}

/** A login refused because its name or address is locked (the audit trail's `signInLocked`). */
export class LoginLocked extends HttpError {}

const userKey = (name: string) => `user:${name}`;
const addressKey = (address: string) => `address:${address}`;

export function createLoginGuard(
  db: Kysely<Database>,
  limits: TrellisConfig['Security']['RateLimits'],
  logger: Logger,
): LoginGuard | null {
  if (!limits.Enabled) return null;
  const locks = new Map<string, number>();
  const requests = new RateLimiterMemory({ points: limits.RequestsPerUserPerMinute, duration: 60 });

  const tooMany = (key: string, until: number) => {
    const seconds = Math.max(1, Math.ceil((until - Date.now()) / 1000));
    const who = key.startsWith('user:')
      ? `user "${key.slice('user:'.length)}"`
      : `this client address`;
    return new LoginLocked(
      429,
      `Too many failed logins for ${who}: logins are refused for ${seconds} s. Wait, then try again with the right credentials.`,
      { 'Retry-After': String(seconds) },
    );
  };
  const lockedInMemory = (key: string) => {
    const until = locks.get(key);
    if (until === undefined) return;
    if (until > Date.now()) throw tooMany(key, until);
    locks.delete(key);
  };
  const keysOf = (name: string | null, address: string) => [
    ...(name === null ? [] : [userKey(name)]),
    addressKey(address),
  ];

  return {
    async beforeVerifying(name, address) {
      let hadFailures = false;
      for (const key of keysOf(name, address)) {
        lockedInMemory(key);
        const state = await failureState(db, key);
        if (state.lockedUntil) {
          locks.set(key, state.lockedUntil.getTime());
          throw tooMany(key, state.lockedUntil.getTime());
        }
        // The name's failures are forgotten after a success: a write only when there are some.
        if (key.startsWith('user:')) hadFailures = state.hasFailures;
      }
      return { hadFailures };
    },
    beforeCached(name) {
      lockedInMemory(userKey(name));
    },
    async failed(name, address) {
      const counted: [string, number][] = [
        ...(name === null ? [] : [[userKey(name), limits.FailedLoginsPerUser] as [string, number]]),
        [addressKey(address), limits.FailedLoginsPerAddress],
      ];
      for (const [key, limit] of counted) {
        const until = await recordFailure(db, key, limit, limits.WindowSeconds);
        if (until && !locks.has(key)) {
          logger.warn(
            { key, limit, windowSeconds: limits.WindowSeconds, lockedUntil: until.toISOString() },
            `too many failed logins for ${key}: locked for ${limits.WindowSeconds} s`,
          );
        }
        if (until) locks.set(key, until.getTime());
      }
    },
    async succeeded(name, hadFailures) {
      if (hadFailures) await clearFailures(db, userKey(name));
    },
    async request(name) {
      try {
        await requests.consume(name);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        const seconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
        throw new HttpError(
          429,
          `Too many requests for user "${name}": at most ${limits.RequestsPerUserPerMinute} a minute (Security.RateLimits.RequestsPerUserPerMinute). Try again in ${seconds} s.`,
          { 'Retry-After': String(seconds) },
        );
      }
    },
  };
}
