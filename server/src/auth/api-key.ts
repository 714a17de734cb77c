import type { Kysely } from 'kysely';
import type { Logger } from '#platform/logging.js';
import { apiKeyCallerName, lookupIdOf, matchesApiKey } from '#platform/security/api-key-secret.js';
import * as apiKeyRepository from '#store/api-key-repository.js';
import type { Database } from '#store/tables.js';
import { HttpError } from '../http-error.js';
import type { LoginGuard } from './login-guard.js';
import type { AuthUser } from './user.js';

const minuteMs = 60_000;

/**
 * Verifies `Bearer trellis_...` API keys: one query on the key's lookup id (its row with its
 * project's name), the secret's hash compared in constant time, then expiry and revocation.
 * Nothing is cached, so a revoked key is refused from the next request on, by every API process.
 * The key's last use is written at most once a minute. Failures count against the client address
 * (`guard`); no lock is looked up before, which would cost a query per request while a 256-bit
 * secret cannot be guessed.
 */
export function createApiKeyAuthenticator(
  db: Kysely<Database>,
  logger: Logger,
  guard: LoginGuard | null = null,
) {
  const refuse = async (address: string, message: string) => {
    await guard?.failed(null, address);
    return new HttpError(401, message);
  };
  return async function authenticateApiKey(header: string, address = ''): Promise<AuthUser> {
    const key = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] ?? '';
    const lookupId = lookupIdOf(key);
    if (!lookupId) throw await refuse(address, 'The API key is malformed.');
    const row = await apiKeyRepository.findByLookupId(db, lookupId);
    if (!row || !matchesApiKey(key, row.hash))
      throw await refuse(address, 'The API key is invalid.');
    const name = apiKeyCallerName(row.projectName, row.name);
    if (row.revokedAt) throw new HttpError(401, `The API key "${name}" was revoked.`);
    const now = Date.now();
    if (row.expiresAt && row.expiresAt.getTime() <= now) {
      throw new HttpError(
        401,
        `The API key "${name}" expired at ${row.expiresAt.toISOString()}; create a new one.`,
      );
    }
    if (!row.lastUsedAt || now - row.lastUsedAt.getTime() >= minuteMs) {
      await apiKeyRepository
        .markUsed(db, row.id)
        .catch((error: unknown) => logger.warn({ err: error }, 'cannot record an API key use'));
    }
    return {
      name,
      roles: [...row.roles],
      apiKey: {
        id: row.id,
        project: { id: row.projectId, name: row.projectName },
        limits: row.projectLimits,
      },
    };
  };
}
