import { sql, type Kysely } from 'kysely';
import { Conflict } from '#definition/errors.js';
import { translateConstraintErrors } from './constraint-errors.js';
import { isUuid, newId } from './ids.js';
import { paginate, type Page, type Paged } from './paging.js';
import type { Database, PluginConfigurationRow } from './tables.js';

/** Plugin configurations (`/config`): named settings for a plugin type and version. */

/** What a client writes; `specifications` arrive already checked (and secrets encrypted). */
export interface ConfigurationInput {
  name: string;
  type: string;
  version: string;
  specifications: Record<string, unknown>;
}

const duplicateName = (name: string) => () =>
  new Conflict(`A configuration named "${name}" already exists`);

/** Every configuration by name; one page of them when `page` is given. */
export async function list(
  db: Kysely<Database>,
  page?: Page,
): Promise<Paged<PluginConfigurationRow>> {
  return paginate(
    db.selectFrom('pluginConfiguration').selectAll().orderBy('name').orderBy('id'),
    page,
  );
}

export async function findById(
  db: Kysely<Database>,
  id: string,
): Promise<PluginConfigurationRow | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('pluginConfiguration').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findByName(
  db: Kysely<Database>,
  name: string,
): Promise<PluginConfigurationRow | undefined> {
  return db
    .selectFrom('pluginConfiguration')
    .selectAll()
    .where('name', '=', name)
    .executeTakeFirst();
}

/** Stores a new configuration (`modifiedTime` stays null); `Conflict` when the name is taken. */
export async function insert(
  db: Kysely<Database>,
  input: ConfigurationInput,
): Promise<PluginConfigurationRow> {
  return translateConstraintErrors(
    () =>
      db
        .insertInto('pluginConfiguration')
        .values({ id: newId(), ...input, specifications: JSON.stringify(input.specifications) })
        .returningAll()
        .executeTakeFirstOrThrow(),
    { unique: duplicateName(input.name) },
  );
}

/** Replaces a configuration and stamps `modifiedTime`; undefined when it does not exist. */
export async function update(
  db: Kysely<Database>,
  id: string,
  input: ConfigurationInput,
): Promise<PluginConfigurationRow | undefined> {
  if (!isUuid(id)) return undefined;
  return translateConstraintErrors(
    () =>
      db
        .updateTable('pluginConfiguration')
        .set({
          ...input,
          specifications: JSON.stringify(input.specifications),
          modifiedTime: sql<Date>`now()`,
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst(),
    { unique: duplicateName(input.name) },
  );
}

/** Deletes a configuration; false when it did not exist. */
export async function remove(db: Kysely<Database>, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const result = await db.deleteFrom('pluginConfiguration').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Configurations of a plugin type (any version, or one version), by name: what uninstalling
 * that plugin would break. Types match case-insensitively, as plugin types do.
 */
export async function listByPlugin(
  db: Kysely<Database>,
  type: string,
  version?: string,
): Promise<PluginConfigurationRow[]> {
  let query = db
    .selectFrom('pluginConfiguration')
    .selectAll()
    .where(sql<boolean>`lower(type) = lower(${type})`);
  if (version !== undefined) query = query.where('version', '=', version);
  return query.orderBy('name').execute();
}
