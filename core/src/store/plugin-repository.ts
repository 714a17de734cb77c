import { sql, type Kysely } from 'kysely';
import { Conflict } from '#definition/errors.js';
import { compareTypeAndVersion } from '#definition/plugin-versions.js';
import { translateConstraintErrors } from './constraint-errors.js';
import { isUuid, newId } from './ids.js';
import { preparedQuery } from './prepared.js';
import type { Database, NewPlugin, PluginRow } from './tables.js';

/**
 * Installed plugins. Rows carry their package tarball; every read except `findPackage` leaves
 * the bytes out, since lists and lookups never need them. Types match case-insensitively
 * (`net/http` finds `Net/Http`); versions match exactly.
 */

/** The channel PostgreSQL notifies on every change to the installed plugins (see the migration). */
export const pluginChangesChannel = 'trellis_plugins';

/** An installed plugin without its package bytes. */
export type InstalledPlugin = Omit<PluginRow, 'package'>;

const summaryColumns = [
  'id',
  'type',
  'version',
  'description',
  'specifications',
  'parametersSchema',
  'outputSchema',
  'effects',
  'quick',
  'source',
  'sha256',
  'installedAt',
] as const;

function sameType(type: string) {
  return sql<boolean>`lower(type) = lower(${type})`;
}

/** Installed plugins, by type then version; `group` keeps `<group>/...`, `type` one exact type. */
export async function list(
  db: Kysely<Database>,
  filter: { group?: string; type?: string } = {},
): Promise<InstalledPlugin[]> {
  let query = db.selectFrom('plugin').select(summaryColumns);
  if (filter.type !== undefined) query = query.where(sameType(filter.type));
  if (filter.group !== undefined) {
    query = query.where(sql<boolean>`lower(split_part(type, '/', 1)) = lower(${filter.group})`);
  }
  return (await query.execute()).sort(compareTypeAndVersion);
}

export async function findById(
  db: Kysely<Database>,
  id: string,
): Promise<InstalledPlugin | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('plugin').select(summaryColumns).where('id', '=', id).executeTakeFirst();
}

export async function findByTypeVersion(
  db: Kysely<Database>,
  type: string,
  version: string,
): Promise<InstalledPlugin | undefined> {
  const [row] = await selectByTypeVersion(db, { type, version });
  return row;
}

const selectByTypeVersion = preparedQuery((db, values: { type: string; version: string }) =>
  db
    .selectFrom('plugin')
    .select(summaryColumns)
    .where(sameType(values.type))
    .where('version', '=', values.version),
);

// Prepared: adding a workflow looks its plugins up on every request.
const selectByType = preparedQuery((db, values: { type: string }) =>
  db.selectFrom('plugin').select(summaryColumns).where(sameType(values.type)),
);

/** Every installed version of a type, oldest version first. */
export async function listByType(db: Kysely<Database>, type: string): Promise<InstalledPlugin[]> {
  return (await selectByType(db, { type })).sort(compareTypeAndVersion);
}

/** The installed version of a type with the highest semver, if any. */
export async function latestByType(
  db: Kysely<Database>,
  type: string,
): Promise<InstalledPlugin | undefined> {
  return (await listByType(db, type)).at(-1);
}

/** Records an installed plugin; `Conflict` when that type and version is already installed. */
export async function insert(
  db: Kysely<Database>,
  plugin: Omit<NewPlugin, 'id'>,
): Promise<InstalledPlugin> {
  return translateConstraintErrors(
    () =>
      db
        .insertInto('plugin')
        .values({ id: newId(), ...plugin })
        .returning(summaryColumns)
        .executeTakeFirstOrThrow(),
    {
      unique: () => new Conflict(`Plugin "${plugin.type}" ${plugin.version} is already installed`),
    },
  );
}

/**
 * Replaces the package (and what its manifest says) of an installed type and version, keeping
 * its id; undefined when that version is not installed.
 */
export async function replacePackage(
  db: Kysely<Database>,
  plugin: Omit<NewPlugin, 'id'>,
): Promise<InstalledPlugin | undefined> {
  const { type, version, installedAt: _unchanged, ...changes } = plugin;
  return db
    .updateTable('plugin')
    .set(changes)
    .where(sameType(type))
    .where('version', '=', version)
    .returning(summaryColumns)
    .executeTakeFirst();
}

/** Removes one installed version; false when it was not installed. */
export async function remove(
  db: Kysely<Database>,
  type: string,
  version: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('plugin')
    .where(sameType(type))
    .where('version', '=', version)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Replaces every installed version of `plugin.type` with `plugin`, atomically. */
export async function replaceVersion(
  db: Kysely<Database>,
  plugin: Omit<NewPlugin, 'id'>,
): Promise<InstalledPlugin> {
  const replace = async (trx: Kysely<Database>) => {
    await trx.deleteFrom('plugin').where(sameType(plugin.type)).execute();
    return insert(trx, plugin);
  };
  return db.isTransaction ? replace(db) : db.transaction().execute(replace);
}

/** The package tarball with this content address, from any installed row holding it. */
export async function findPackage(
  db: Kysely<Database>,
  sha256: string,
): Promise<Buffer | undefined> {
  const row = await db
    .selectFrom('plugin')
    .select('package')
    .where('sha256', '=', sha256)
    .limit(1)
    .executeTakeFirst();
  return row?.package;
}
