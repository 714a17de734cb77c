import type { Kysely } from 'kysely';
import * as configurationRepository from '#store/configuration-repository.js';
import * as pluginRepository from '#store/plugin-repository.js';
import type { InstalledPlugin } from '#store/plugin-repository.js';
import type { Database, NewPlugin } from '#store/tables.js';
import { Conflict, NotFound } from '#definition/errors.js';
import { UNDECLARED_EFFECTS } from '#definition/plugin-effects.js';
import type { PluginCatalog, ResolvedPackage } from './catalog.js';
import { checkConfigurationSpecifications } from './settings.js';
import { configurationsOnVersions, findPluginUsages, type PluginUsages } from './usages.js';

/**
 * Installing, updating and uninstalling plugins (POST/PUT/DELETE /plugins): the catalog
 * supplies the package, the database keeps it (bytes included) so every worker can load it.
 */

export interface PluginReference {
  type: string;
  /** A semver version; `latest` or absent means the catalog's highest. */
  version?: string;
}

/** Installs a package from the catalog; `NotFound` when the catalog lacks it, `Conflict` when installed. */
export async function installPlugin(
  db: Kysely<Database>,
  catalog: PluginCatalog,
  reference: PluginReference,
): Promise<InstalledPlugin> {
  const resolved = await catalog.resolve(reference.type, reference.version);
  const { type, version } = resolved.manifest;
  if (await pluginRepository.findByTypeVersion(db, type, version)) {
    throw new Conflict(`Plugin "${type}" ${version} is already installed`);
  }
  return pluginRepository.insert(db, toRow(resolved));
}

/**
 * Moves an installed type to another version of the catalog, replacing every installed version
 * of it. Already installed at exactly that version alone: nothing changes (`changed: false`),
 * as a repeated PUT must not fail (RFC 9110 §9.2.2). `NotFound` when the type is not installed or
 * the catalog lacks the version; `Conflict` when a stored workflow or configuration pins a version
 * this would remove. Configurations on the old versions move to the
 * new one (`Conflict` naming them when their settings do not fit it).
 */
export async function updatePlugin(
  db: Kysely<Database>,
  catalog: PluginCatalog,
  reference: PluginReference,
): Promise<{ plugin: InstalledPlugin; changed: boolean }> {
  const installed = await pluginRepository.listByType(db, reference.type);
  if (installed.length === 0) {
    throw new NotFound(
      `Plugin "${reference.type}" is not installed, so it cannot be updated; install it with POST /plugins`,
    );
  }
  const resolved = await catalog.resolve(reference.type, reference.version);
  const { type, version } = resolved.manifest;
  if (installed.length === 1 && installed[0]!.version === version) {
    // Installed before its row kept whether it is quick: its manifest says so now (nothing the
    // API shows changes).
    if (installed[0]!.quick === null) {
      const refreshed = await pluginRepository.replacePackage(db, toRow(resolved));
      return { plugin: refreshed ?? installed[0]!, changed: false };
    }
    return { plugin: installed[0]!, changed: false };
  }
  const removed = installed.filter((plugin) => plugin.version !== version).map((p) => p.version);
  const usages = await findPluginUsages(db, {
    type,
    removedVersions: removed,
    remainingVersions: [version],
    includeConfigurations: false,
  });
  refuseWhenUsed(usages, `Plugin "${type}" cannot be updated to ${version}`, removed);
  // Configurations are the type's settings: they move to the new version when they fit it.
  const moving = await configurationsOnVersions(db, type, removed);
  const misfits = moving.flatMap((configuration) =>
    checkConfigurationSpecifications(
      resolved.manifest.specifications,
      configuration.specifications,
    ).map((problem) => `configuration "${configuration.name}": ${problem}`),
  );
  if (misfits.length > 0) {
    throw new Conflict([
      `Plugin "${type}" cannot be updated to ${version}: its configurations do not fit that version`,
      ...misfits,
    ]);
  }
  const plugin = await db.transaction().execute(async (trx) => {
    const row = await pluginRepository.replaceVersion(trx, toRow(resolved));
    for (const { id, name, specifications } of moving) {
      await configurationRepository.update(trx, id, { name, type, version, specifications });
    }
    return row;
  });
  return { plugin, changed: true };
}

/** Uninstalls one installed version; `NotFound` when not installed, `Conflict` naming its users. */
export async function uninstallPlugin(
  db: Kysely<Database>,
  reference: { type: string; version: string },
): Promise<void> {
  const installed = await pluginRepository.listByType(db, reference.type);
  const target = installed.find((plugin) => plugin.version === reference.version);
  if (!target) {
    const versions = installed.map((plugin) => plugin.version);
    throw new NotFound(
      `Plugin "${reference.type}" ${reference.version} is not installed` +
        (versions.length > 0 ? `; installed versions: ${versions.join(', ')}` : ''),
    );
  }
  const usages = await findPluginUsages(db, {
    type: target.type,
    removedVersions: [target.version],
    remainingVersions: installed.filter((p) => p !== target).map((p) => p.version),
  });
  refuseWhenUsed(usages, `Plugin "${target.type}" ${target.version} cannot be uninstalled`, [
    target.version,
  ]);
  await pluginRepository.remove(db, target.type, target.version);
}

/**
 * Installs every built-in package not installed yet at its version (idempotent; safe when
 * several processes start at once). A built-in installed at the same version whose package has
 * changed since (built-ins ship with the code, so a newer Trellis may carry a better manifest,
 * such as the output schema of an upgrade), or installed before its row kept all a manifest says,
 * is refreshed in place. Returns what it installed or
 * refreshed.
 */
export async function installBuiltIns(
  db: Kysely<Database>,
  catalog: PluginCatalog,
  logger: { info(details: object, message: string): void },
): Promise<InstalledPlugin[]> {
  const installed: InstalledPlugin[] = [];
  const refreshed: InstalledPlugin[] = [];
  for (const builtIn of await catalog.builtIns()) {
    const current = await pluginRepository.findByTypeVersion(db, builtIn.type, builtIn.version);
    if (current) {
      if (current.source !== 'builtin') continue;
      const resolved = await catalog.resolve(builtIn.type, builtIn.version);
      // Unchanged, unless installed before the row kept whether it is quick.
      if (resolved.sha256 === current.sha256 && current.quick !== null) continue;
      const row = await pluginRepository.replacePackage(db, toRow(resolved));
      if (row) refreshed.push(row);
      continue;
    }
    try {
      const resolved = await catalog.resolve(builtIn.type, builtIn.version);
      installed.push(await pluginRepository.insert(db, toRow(resolved)));
    } catch (error) {
      // Another process installed it between our check and our insert.
      if (error instanceof Conflict) continue;
      throw error;
    }
  }
  const names = (plugins: InstalledPlugin[]) => ({
    plugins: plugins.map((plugin) => `${plugin.type}@${plugin.version}`),
  });
  if (installed.length > 0) {
    logger.info(names(installed), `Installed ${installed.length} built-in plugin(s)`);
  }
  if (refreshed.length > 0) {
    logger.info(
      names(refreshed),
      `Refreshed ${refreshed.length} built-in plugin(s) whose row was older than the package at the same version`,
    );
  }
  return [...installed, ...refreshed];
}

function toRow(resolved: ResolvedPackage): Omit<NewPlugin, 'id'> {
  const { manifest } = resolved;
  return {
    type: manifest.type,
    version: manifest.version,
    description: manifest.description,
    specifications: JSON.stringify(manifest.specifications),
    parametersSchema: JSON.stringify(manifest.parameters ?? {}),
    outputSchema: JSON.stringify(manifest.output ?? {}),
    effects: manifest.effects ?? UNDECLARED_EFFECTS,
    quick: manifest.quick === true,
    source: resolved.source,
    sha256: resolved.sha256,
    package: resolved.bytes,
  };
}

function refuseWhenUsed(usages: PluginUsages, what: string, versions: string[]): void {
  const parts = [
    usages.workflows.length > 0 && `workflows ${quoteAll(usages.workflows)}`,
    usages.configurations.length > 0 && `configurations ${quoteAll(usages.configurations)}`,
  ].filter(Boolean);
  if (parts.length === 0) return;
  throw new Conflict(
    `${what}: version ${versions.join(', ')} is in use by ${parts.join(' and ')}; ` +
      'change or delete them first',
  );
}

function quoteAll(names: string[]): string {
  return names.map((name) => `"${name}"`).join(', ');
}
