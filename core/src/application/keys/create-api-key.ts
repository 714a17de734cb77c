/**
 * Creating a project's API key: who may, with which roles, and the key itself (shown once, stored
 * as a hash).
 */
import type { Kysely } from 'kysely';
import { Conflict, Forbidden } from '#definition/errors.js';
import type { Role } from '#platform/config/types.js';
import { newApiKey } from '#platform/security/api-key-secret.js';
import * as apiKeyRepository from '#store/api-key-repository.js';
import type { ApiKeyRow, Database } from '#store/tables.js';

/** Who creates a key: its name and roles in the key's project, and whether it is a key itself. */
export interface KeyCreator {
  name: string;
  roles: readonly Role[];
  isApiKey: boolean;
}

/** The roles of `requested` that `holder` does not hold (`admin` holds them all). */
export function rolesBeyond(holder: readonly Role[], requested: readonly Role[]): Role[] {
  if (holder.includes('admin')) return [];
  return [...new Set(requested.filter((role) => !holder.includes(role)))];
}

/**
 * Creates a key in `projectId` with roles no wider than the creator's there (else `Forbidden`
 * naming them) and an expiry in the future (else `Conflict`). A key may not create keys: a leaked
 * one could otherwise outlive its own revocation in keys it made. Returns the row and the key,
 * which nothing stores.
 */
export async function createApiKey(
  db: Kysely<Database>,
  request: {
    projectId: string;
    creator: KeyCreator;
    name: string;
    roles: Role[];
    expiresAt?: string;
  },
): Promise<{ row: ApiKeyRow; key: string }> {
  const { creator } = request;
  if (creator.isApiKey) {
    throw new Forbidden(
      `API key "${creator.name}" may not create API keys; a person creates them.`,
      {
        code: 'auth.forbidden',
      },
    );
  }
  const beyond = rolesBeyond(creator.roles, request.roles);
  if (beyond.length > 0) {
    throw new Forbidden(
      `User "${creator.name}" may not give a key the roles ${beyond.join(', ')}: a key's roles must be among its creator's in the project (${creator.roles.join(', ') || 'none'}).`,
      { code: 'auth.forbidden' },
    );
  }
  const expiresAt = request.expiresAt === undefined ? null : new Date(request.expiresAt);
  if (expiresAt !== null && expiresAt.getTime() <= Date.now()) {
    // The document cannot say "after now"; the clock is the instance's state, hence a conflict.
    throw new Conflict({
      code: 'key.expiry_passed',
      path: 'body.expiresAt',
      message: `must be in the future (it is ${new Date().toISOString()} here).`,
    });
  }
  const { key, lookupId, hash } = newApiKey();
  const row = await apiKeyRepository.insert(db, {
    projectId: request.projectId,
    name: request.name,
    lookupId,
    hash,
    roles: request.roles,
    createdBy: creator.name,
    expiresAt,
  });
  return { row, key };
}
