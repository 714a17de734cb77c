import { sql, type Kysely } from 'kysely';
import { Conflict } from '#definition/errors.js';
import { translateConstraintErrors } from './constraint-errors.js';
import { isUuid, newId } from './ids.js';
import { paginate, type Page, type Paged } from './paging.js';
import type { Database, PluginConfigurationRow } from './tables.js';

/**
 * Plugin configurations (`/config`): named settings for a plugin type and version, each owned by
 * a project, where its name is unique. Every look-up a caller makes goes through its project: a
 * configuration of another project is not found, as one that does not exist.
 */

/** What a client writes; `specifications` arrive already checked (and secrets encrypted). */
export interface ConfigurationInput {
  name: string;
  type: string;
  version: string;
  specifications: Record<string, unknown>;
}

const duplicateName = (name: string) => () =>
  new Conflict(`A configuration named "${name}" already exists`);

/** A project's configurations by name; one page of them when `page` is given. */
export async function list(
  db: Kysely<Database>,
  projectId: string,
  page?: Page,
): Promise<Paged<PluginConfigurationRow>> {
  return paginate(
    db
      .selectFrom('pluginConfiguration')
      .selectAll()
      .where('projectId', '=', projectId)
      .orderBy('name')
      .orderBy('id'),
    page,
  );
}

/** A configuration of the project; undefined when unknown or another project's. */
export async function findById(
  db: Kysely<Database>,
  projectId: string,
  id: string,
): Promise<PluginConfigurationRow | undefined> {
  if (!isUuid(id)) return undefined;
  return db
    .selectFrom('pluginConfiguration')
    .selectAll()
    .where('projectId', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The configuration a task's `type` names in the project; undefined when it has none so named. */
export async function findByName(
  db: Kysely<Database>,
  projectId: string,
  name: string,
): Promise<PluginConfigurationRow | undefined> {
  return db
    .selectFrom('pluginConfiguration')
    .selectAll()
    .where('projectId', '=', projectId)
    .where('name', '=', name)
    .executeTakeFirst();
}

/**
 * Stores a new configuration of the project (`modifiedTime` stays null); `Conflict` when the name
 * is taken there.
 */
export async function insert(
  db: Kysely<Database>,
  projectId: string,
  input: ConfigurationInput,
): Promise<PluginConfigurationRow> {
  return translateConstraintErrors(
    () =>
      db
        .insertInto('pluginConfiguration')
        .values({
          id: newId(),
          projectId,
          ...input,
          specifications: JSON.stringify(input.specifications),
        })
        .returningAll()
        .executeTakeFirstOrThrow(),
    { unique: duplicateName(input.name) },
  );
}

/**
 * Replaces a configuration (found by id: in its project, or instance-wide when a plugin update
 * moves it) and stamps `modifiedTime`; undefined when it does not exist.
 */
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
 * Configurations of a plugin type (any version, or one version) in every project, by name: what
 * uninstalling that instance-wide plugin would break. Types match case-insensitively, as plugin
 * types do.
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
