import { sql, type Kysely } from 'kysely';
import { Conflict } from '#definition/errors.js';
import type { Role } from '#platform/config/types.js';
import { translateConstraintErrors } from './constraint-errors.js';
import { newId } from './ids.js';
import { paginate, type Page, type Paged } from './paging.js';
import type { ApiKeyRow, Database, ProjectLimits } from './tables.js';

/**
 * Projects' API keys. A key is found by its lookup id (the public part of the key) on a unique
 * index; its secret is checked against the stored hash by whoever authenticates it.
 */

export interface NewApiKey {
  projectId: string;
  name: string;
  lookupId: string;
  hash: Buffer;
  roles: Role[];
  createdBy: string;
  expiresAt: Date | null;
}

/** A key as authentication reads it: with its project's name. */
export type ApiKeyWithProject = ApiKeyRow & { projectName: string; projectLimits: ProjectLimits };

/** How long a key's `lastUsedAt` may lag behind its use: one write a minute, not one a request. */
export const lastUsedPrecision = '1 minute';

export async function insert(db: Kysely<Database>, key: NewApiKey): Promise<ApiKeyRow> {
  return translateConstraintErrors(
    () =>
      db
        .insertInto('apiKey')
        .values({ id: newId(), ...key, roles: JSON.stringify([...new Set(key.roles)]) })
        .returningAll()
        .executeTakeFirstOrThrow(),
    {
      unique: () =>
        new Conflict(`The project already has a live API key named "${key.name}".`, {
          code: 'key.name_taken',
        }),
    },
  );
}

/** A project's keys, revoked ones included, newest first; one page of them when `page` is given. */
export async function list(
  db: Kysely<Database>,
  projectId: string,
  page?: Page,
): Promise<Paged<ApiKeyRow>> {
  return paginate(
    db
      .selectFrom('apiKey')
      .selectAll()
      .where('projectId', '=', projectId)
      .orderBy('createdAt', 'desc')
      .orderBy('id'),
    page,
  );
}

export async function find(
  db: Kysely<Database>,
  projectId: string,
  id: string,
): Promise<ApiKeyRow | undefined> {
  return db
    .selectFrom('apiKey')
    .selectAll()
    .where('projectId', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Revokes a live key; undefined when the project has no live key of that id. */
export async function revoke(
  db: Kysely<Database>,
  projectId: string,
  id: string,
): Promise<ApiKeyRow | undefined> {
  return db
    .updateTable('apiKey')
    .set({ revokedAt: sql<Date>`now()` })
    .where('projectId', '=', projectId)
    .where('id', '=', id)
    .where('revokedAt', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** The key of a lookup id, with its project's name and limits: one query on the lookup id's unique index. */
export async function findByLookupId(
  db: Kysely<Database>,
  lookupId: string,
): Promise<ApiKeyWithProject | undefined> {
  return db
    .selectFrom('apiKey')
    .innerJoin('project', 'project.id', 'apiKey.projectId')
    .selectAll('apiKey')
    .select(['project.name as projectName', 'project.limits as projectLimits'])
    .where('apiKey.lookupId', '=', lookupId)
    .executeTakeFirst();
}

/** Records a key's use, unless it was recorded within {@link lastUsedPrecision}. */
export async function markUsed(db: Kysely<Database>, id: string): Promise<void> {
  await db
    .updateTable('apiKey')
    .set({ lastUsedAt: sql<Date>`now()` })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        eb('lastUsedAt', 'is', null),
        eb('lastUsedAt', '<', sql<Date>`now() - ${sql.lit(lastUsedPrecision)}::interval`),
      ]),
    )
    .execute();
}
