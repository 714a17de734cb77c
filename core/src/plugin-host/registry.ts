import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Invalid, Unavailable } from '#definition/errors.js';
import { trellisSchemas } from '#definition/validation/ajv.js';
import { formatBytes } from '#definition/format-bytes.js';
import { PACKAGE_INVALID, packFolder, readPackageFolder, sha256Hex } from './package.js';
import { validationProblems } from '#definition/validation/plugin-wording.js';

/**
 * A plugin registry: a directory or HTTP(S) base URL holding `index.json` and the package
 * tarballs it lists, each with its sha256. Tarball paths are relative to the index.
 */

export const REGISTRY_INDEX_FILE = 'index.json';

export interface RegistryEntry {
  type: string;
  version: string;
  description: string;
  /** Hex sha256 of the tarball. */
  sha256: string;
  /** Path or URL of the tarball, relative to the index. */
  tarball: string;
}

export interface RegistryIndex {
  plugins: RegistryEntry[];
}

const validateIndex = trellisSchemas.compile({
  type: 'object',
  required: ['plugins'],
  properties: {
    plugins: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'version', 'sha256', 'tarball'],
        properties: {
          type: { type: 'string' },
          version: { type: 'string' },
          description: { type: 'string', default: '' },
          sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
          tarball: { type: 'string', minLength: 1 },
        },
      },
    },
  },
});

export interface Registry {
  /** Where the registry is, as configured (for messages). */
  location: string;
  /** The index, read afresh: a registry may publish new versions at any time. */
  entries(): Promise<RegistryEntry[]>;
  /**
   * The tarball bytes of an entry (not yet checked against its sha256); `Invalid` when it is
   * larger than `maxBytes`, found before more than that is read.
   */
  download(entry: RegistryEntry, maxBytes: number): Promise<Buffer>;
}

/** A registry at a directory path or an `http(s)://` URL (of the folder or of its index.json). */
export function openRegistry(location: string): Registry {
  const remote = /^https?:\/\//i.test(location);
  const indexLocation = remote
    ? new URL(
        location.endsWith('.json')
          ? location
          : `${location.replace(/\/*$/, '/')}${REGISTRY_INDEX_FILE}`,
      ).href
    : location.endsWith('.json')
      ? path.resolve(location)
      : path.resolve(location, REGISTRY_INDEX_FILE);
  const tarballLocation = (entry: RegistryEntry) =>
    remote
      ? new URL(entry.tarball, indexLocation).href
      : path.resolve(path.dirname(indexLocation), entry.tarball);
  const read = (where: string, maxBytes = INDEX_MAX_BYTES) =>
    remote ? fetchBytes(where, maxBytes) : readFileUpTo(where, maxBytes);

  return {
    location,
    async entries() {
      let index: unknown;
      try {
        index = JSON.parse((await read(indexLocation)).toString('utf8'));
      } catch (error) {
        throw new Unavailable(
          `The plugin registry (Plugins.Registry) is unavailable: its ${REGISTRY_INDEX_FILE} cannot be read; the server log says why`,
          { cause: error },
        );
      }
      const problems = validationProblems(validateIndex, index, 'index field');
      if (problems.length > 0) {
        throw new Unavailable(
          `The plugin registry (Plugins.Registry) has an invalid ${REGISTRY_INDEX_FILE}: ${problems.join('; ')}`,
        );
      }
      return (index as RegistryIndex).plugins;
    },
    async download(entry, maxBytes) {
      const where = tarballLocation(entry);
      try {
        return await read(where, maxBytes);
      } catch (error) {
        if (error instanceof TooLarge) {
          throw new Invalid(
            `Plugin package "${entry.type}" ${entry.version} is ${error.size === undefined ? 'larger than' : `${formatBytes(error.size)}, over`} the ${formatBytes(maxBytes)} limit (Plugins.MaxPackageBytes)`,
            { code: PACKAGE_INVALID },
          );
        }
        throw new Unavailable(
          `The plugin registry (Plugins.Registry) is unavailable: the package of "${entry.type}" ${entry.version} cannot be read; the server log says why`,
          { cause: error },
        );
      }
    },
  };
}

/** An index is a list of entries: far below this. */
const INDEX_MAX_BYTES = 16 * 1024 * 1024;

/** A file or response larger than its limit; `size` when known. */
class TooLarge extends Error {
  constructor(readonly size?: number) {
    super(size === undefined ? 'too large' : `${size} bytes is too large`);
  }
}

async function readFileUpTo(file: string, maxBytes: number): Promise<Buffer> {
  const { size } = await stat(file);
  if (size > maxBytes) throw new TooLarge(size);
  return readFile(file);
}

async function fetchBytes(url: string, maxBytes: number): Promise<Buffer> {
  const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw new TooLarge(declared);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const body = (response.body ?? []) as AsyncIterable<Uint8Array>;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) throw new TooLarge();
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/**
 * Packs each package folder into `dir` as `<group>-<name>-<version>.tgz` and writes
 * `dir/index.json` listing them; entries already in the index for other (type, version)
 * pairs are kept, so a registry can grow one package at a time.
 */
export async function buildRegistry(dir: string, packageFolders: string[]): Promise<RegistryIndex> {
  await mkdir(dir, { recursive: true });
  const indexFile = path.join(dir, REGISTRY_INDEX_FILE);
  const existing = await readFile(indexFile, 'utf8').then(
    (text) => (JSON.parse(text) as RegistryIndex).plugins,
    () => [] as RegistryEntry[],
  );
  const added: RegistryEntry[] = [];
  for (const folder of packageFolders) {
    const manifest = await readPackageFolder(folder);
    const bytes = await packFolder(folder);
    const tarball = tarballName(manifest);
    await writeFile(path.join(dir, tarball), bytes);
    added.push({
      type: manifest.type,
      version: manifest.version,
      description: manifest.description,
      sha256: sha256Hex(bytes),
      tarball,
    });
  }
  const key = (entry: RegistryEntry) => `${entry.type.toLowerCase()}@${entry.version}`;
  const replaced = new Set(added.map(key));
  const index: RegistryIndex = {
    plugins: [...existing.filter((entry) => !replaced.has(key(entry))), ...added],
  };
  await writeFile(indexFile, `${JSON.stringify(index, null, 2)}\n`);
  return index;
}

/** The file name of a package's tarball: `<group>-<name>-<version>.tgz`, in lower case. */
export function tarballName(manifest: { type: string; version: string }): string {
  return `${manifest.type.replace('/', '-')}-${manifest.version}.tgz`.toLowerCase();
}

/** Thrown for a package whose bytes do not match what the registry index promised. */
export class PackageIntegrityError extends Unavailable {}
