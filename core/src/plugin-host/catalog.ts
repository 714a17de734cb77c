import { readdir } from 'node:fs/promises';
import path from 'node:path';
import semver from 'semver';
import type { TrellisConfig } from '#platform/config/types.js';
import { Invalid, NotFound } from '#definition/errors.js';
import { installPath } from '#platform/install-root.js';
import type { PluginManifest } from './contract.js';
import { compareTypeAndVersion } from '#definition/plugin-versions.js';
import {
  packageLimits,
  packFolder,
  readPackage,
  readPackageFolder,
  sha256Hex,
  type PackageLimits,
} from './package.js';
import {
  openRegistry,
  PackageIntegrityError,
  type Registry,
  type RegistryEntry,
} from './registry.js';

/**
 * The catalog: every plugin package that can be installed — the built-ins under `plugins/`
 * plus the configured registry (`Plugins.Registry`). Where both offer the same type and
 * version, the built-in wins.
 */

export type PluginSource = 'builtin' | 'registry';

export interface CatalogEntry {
  type: string;
  version: string;
  description: string;
  source: PluginSource;
}

/** A package taken from the catalog, its bytes checked against its sha256. */
export interface ResolvedPackage {
  manifest: PluginManifest;
  bytes: Buffer;
  sha256: string;
  source: PluginSource;
}

export interface PluginCatalog {
  /** Everything installable (built-ins and registry), by type then version. */
  list(): Promise<CatalogEntry[]>;
  /** The built-in packages only (no registry access). */
  builtIns(): Promise<CatalogEntry[]>;
  /**
   * The package of `type` at `version`; `'latest'`, `''` or no version pick the highest
   * semver. `NotFound` naming what is available when there is no such package, `Unavailable`
   * when the registry is unreachable or serves bytes that do not match its index.
   */
  resolve(type: string, version?: string): Promise<ResolvedPackage>;
}

/** The folder holding the built-in packages: `<repo>/plugins`. */
export function builtInPluginsDirectory(): string {
  return installPath('plugins');
}

interface BuiltIn extends CatalogEntry {
  folder: string;
}

interface Published extends CatalogEntry {
  entry: RegistryEntry;
}

type Candidate = BuiltIn | Published;

export function createCatalog(
  config: Pick<TrellisConfig, 'Plugins'>,
  options: { builtInDirectory?: string } = {},
): PluginCatalog {
  const builtInDirectory = options.builtInDirectory ?? builtInPluginsDirectory();
  const registry = config.Plugins.Registry ? openRegistry(config.Plugins.Registry) : undefined;
  const limits = packageLimits(config);
  // Built-ins ship with the code: scanned once, packed once per process.
  let builtIns: Promise<BuiltIn[]> | undefined;
  const packed = new Map<string, Promise<ResolvedPackage>>();

  const listBuiltIns = () => (builtIns ??= scanBuiltIns(builtInDirectory));

  async function candidates(): Promise<Candidate[]> {
    const local = await listBuiltIns();
    const remote = registry ? await published(registry) : [];
    const seen = new Set(local.map(catalogKey));
    return sortEntries<Candidate>([
      ...local,
      ...remote.filter((entry) => !seen.has(catalogKey(entry))),
    ]);
  }

  async function resolve(type: string, version?: string): Promise<ResolvedPackage> {
    const wantLatest =
      version === undefined || version === '' || version.toLowerCase() === 'latest';
    // A pinned built-in needs no registry round trip.
    const pinned = wantLatest
      ? undefined
      : (await listBuiltIns()).find((b) => matches(b, type) && b.version === version);
    const all = pinned ? [pinned] : await candidates();
    const sameType = all.filter((candidate) => matches(candidate, type));
    const chosen = wantLatest ? sameType.at(-1) : sameType.find((c) => c.version === version);
    if (!chosen) throw new NotFound(describeMissing(type, version, sameType, all));
    if ('entry' in chosen) return downloadFromRegistry(registry!, chosen.entry, limits);
    const key = catalogKey(chosen);
    if (!packed.has(key)) packed.set(key, packBuiltIn(chosen));
    return packed.get(key)!;
  }

  function describeMissing(
    type: string,
    version: string | undefined,
    sameType: Candidate[],
    all: Candidate[],
  ): string {
    if (sameType.length > 0) {
      return `Plugin "${sameType[0]!.type}" ${version} is not in the catalog; available versions: ${sameType.map((e) => e.version).join(', ')}`;
    }
    const types = [...new Set(all.map((entry) => entry.type))];
    const where = registry
      ? 'the built-ins or the registry (Plugins.Registry)'
      : 'the built-ins (no registry configured)';
    return `Plugin "${type}"${version ? ` ${version}` : ''} is not in the catalog (${where}); available types: ${types.join(', ') || 'none'}`;
  }

  return {
    list: async () => (await candidates()).map(publicEntry),
    builtIns: async () => (await listBuiltIns()).map(publicEntry),
    resolve,
  };
}

function publicEntry({ type, version, description, source }: Candidate): CatalogEntry {
  return { type, version, description, source };
}

async function scanBuiltIns(directory: string): Promise<BuiltIn[]> {
  const folders = await readdir(directory, { withFileTypes: true }).catch(() => []);
  const entries: BuiltIn[] = [];
  for (const folder of folders) {
    if (!folder.isDirectory() || folder.name.startsWith('.') || folder.name === 'node_modules')
      continue;
    const dir = path.join(directory, folder.name);
    const manifest = await readPackageFolder(dir);
    entries.push({
      type: manifest.type,
      version: manifest.version,
      description: manifest.description,
      source: 'builtin',
      folder: dir,
    });
  }
  return sortEntries(entries);
}

async function packBuiltIn(builtIn: BuiltIn): Promise<ResolvedPackage> {
  const bytes = await packFolder(builtIn.folder);
  const manifest = await readPackageFolder(builtIn.folder);
  return { manifest, bytes, sha256: sha256Hex(bytes), source: 'builtin' };
}

async function published(registry: Registry): Promise<Published[]> {
  return (await registry.entries())
    .filter((entry) => semver.valid(entry.version))
    .map((entry) => ({
      type: entry.type,
      version: entry.version,
      description: entry.description,
      source: 'registry' as const,
      entry,
    }));
}

async function downloadFromRegistry(
  registry: Registry,
  entry: RegistryEntry,
  limits: PackageLimits,
): Promise<ResolvedPackage> {
  // Where the registry keeps it (a path on this server, a URL) is for the server log, not users.
  const source = `"${entry.type}" ${entry.version}`;
  const bytes = await registry.download(entry, limits.maxPackageBytes);
  const sha256 = sha256Hex(bytes);
  if (sha256 !== entry.sha256.toLowerCase()) {
    throw new PackageIntegrityError(
      `Checksum mismatch for plugin "${entry.type}" ${entry.version} from the registry: ` +
        `the index says sha256 ${entry.sha256} but its tarball has ${sha256}; refusing to install it`,
    );
  }
  const { manifest } = await readPackage(bytes, source, limits);
  if (catalogKey(manifest) !== catalogKey(entry)) {
    throw new PackageIntegrityError(
      `Plugin package ${source} holds "${manifest.type}" ${manifest.version}, but the index lists it as "${entry.type}" ${entry.version}`,
    );
  }
  if (manifest.inProcess === true) {
    throw new Invalid(
      `Plugin package ${source}: plugin.json field "inProcess" is for built-in plugins only; a registry plugin always runs in a sandbox`,
    );
  }
  return { manifest, bytes, sha256, source: 'registry' };
}

function matches(entry: { type: string }, type: string): boolean {
  return entry.type.toLowerCase() === type.toLowerCase();
}

function catalogKey(entry: { type: string; version: string }): string {
  return `${entry.type.toLowerCase()}@${entry.version}`;
}

function sortEntries<T extends CatalogEntry>(entries: T[]): T[] {
  return entries.sort(compareTypeAndVersion);
}
