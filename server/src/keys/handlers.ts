import { Conflict, NotFound } from '#definition/errors.js';
import { createApiKey } from '#application/keys/create-api-key.js';
import { apiKeyPrefix } from '#platform/security/api-key-secret.js';
import * as apiKeyRepository from '#store/api-key-repository.js';
import type { ApiKeyRow } from '#store/tables.js';
import { confirmation, type HandlerMap } from '../handler.js';
import { listReply, requestedPage } from '../lists.js';
import type { RequestProject } from '../projects/request-project.js';

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** A key as every answer shows it: never its secret, nor its hash. */
function toApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    roles: row.roles,
    prefix: apiKeyPrefix(row.lookupId),
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    expiresAt: iso(row.expiresAt),
    lastUsedAt: iso(row.lastUsedAt),
    revokedAt: iso(row.revokedAt),
  };
}

const keyNotFound = (project: RequestProject, keyId: string) =>
  new NotFound(`Project "${project.name}" has no API key ${keyId}.`, { code: 'key.not_found' });

/** `/projects/{projectId}/keys`: a project's API keys. */
export const apiKeyHandlers = {
  listApiKeys: async ({ deps, project, query }) =>
    listReply(
      await apiKeyRepository.list(deps.db, project.id, requestedPage(query)),
      query,
      toApiKey,
    ),

  createApiKey: async ({ deps, project, user, body }) => {
    const { row, key } = await createApiKey(deps.db, {
      projectId: project.id,
      creator: { name: user.name, roles: user.roles, isApiKey: user.apiKey !== undefined },
      name: body.name,
      roles: body.roles,
      ...(body.expiresAt === undefined ? {} : { expiresAt: body.expiresAt }),
    });
    const { revokedAt: _, ...created } = toApiKey(row);
    return {
      data: { ...created, key },
      messages: [`API key "${row.name}" was created. Its secret is shown only this once.`],
    };
  },

  getApiKey: async ({ deps, project, params }) => {
    const row = await apiKeyRepository.find(deps.db, project.id, params.keyId);
    if (!row) throw keyNotFound(project, params.keyId);
    if (row.revokedAt) {
      throw new NotFound(
        `API key "${row.name}" was revoked at ${iso(row.revokedAt)}; the list of keys keeps it for the record.`,
        { code: 'key.revoked' },
      );
    }
    return { data: toApiKey(row) };
  },

  revokeApiKey: async ({ deps, project, params }) => {
    const revoked = await apiKeyRepository.revoke(deps.db, project.id, params.keyId);
    if (revoked) return confirmation(`API key "${revoked.name}" was revoked.`);
    const row = await apiKeyRepository.find(deps.db, project.id, params.keyId);
    if (!row) throw keyNotFound(project, params.keyId);
    throw new Conflict(`API key "${row.name}" was already revoked at ${iso(row.revokedAt)}.`, {
      code: 'key.revoked',
    });
  },
} satisfies Partial<HandlerMap>;
