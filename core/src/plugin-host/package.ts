import { createHash, randomUUID } from 'node:crypto';
import {
  access,
  mkdir,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import semver from 'semver';
import * as tar from 'tar';
import type { PluginSpecificationDescriptor } from '#store/tables.js';
import { Invalid } from '#definition/errors.js';
import { formatBytes } from '#definition/format-bytes.js';
import { PLUGIN_EFFECTS, UNDECLARED_EFFECTS } from '#definition/plugin-effects.js';
import { installPath } from '#platform/install-root.js';
import { claimFolder, olderThan, removeStaleFolders } from '#platform/leftovers.js';
import { pluginSchemaValidator, trellisSchemas } from '#definition/validation/ajv.js';
import { isOfJsonType } from '#definition/validation/json-type.js';
import type { PluginManifest } from './contract.js';
import { validationProblems } from '#definition/validation/plugin-wording.js';

/**
 * The plugin package (docs/ARCHITECTURE.md#plugins): a folder with `plugin.json` and an ES module,
 * shipped as a deterministic gzip'd tarball whose sha256 is its content address.
 */

export const MANIFEST_FILE = 'plugin.json';

const manifestSchema = {
  type: 'object',
  required: ['type', 'version', 'description'],
  properties: {
    type: { type: 'string' },
    version: { type: 'string' },
    description: { type: 'string' },
    main: { type: 'string', minLength: 1 },
    parameters: { type: 'object' },
    output: { type: 'object' },
    quick: { type: 'boolean' },
    inProcess: { type: 'boolean' },
    effects: { enum: PLUGIN_EFFECTS, default: UNDECLARED_EFFECTS },
    specifications: {
      type: 'array',
      default: [],
      items: {
        type: 'object',
        required: ['key', 'type'],
        additionalProperties: false,
        properties: {
          key: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
          type: { enum: ['string', 'number', 'integer', 'boolean', 'object', 'array'] },
          required: { type: 'boolean', default: false },
          secret: { type: 'boolean', default: false },
          destination: { type: 'boolean' },
          description: { type: 'string', default: '' },
          default: {},
        },
      },
    },
  },
} as const;

/** `<Group>/<Name>`, e.g. `Net/Http`. */
export const PLUGIN_TYPE = /^[A-Za-z][A-Za-z0-9_-]*\/[A-Za-z][A-Za-z0-9_.-]*$/;

const validateManifestShape = trellisSchemas.compile(manifestSchema);

/**
 * Validates a parsed `plugin.json` and returns it with defaults filled in; throws `Invalid`
 * listing every problem, each prefixed with `source` (the folder or tarball).
 */
export function parseManifest(value: unknown, source: string): PluginManifest {
  const manifest = structuredClone(value);
  const problems = validationProblems(validateManifestShape, manifest, 'field');
  if (problems.length === 0) {
    const checked = manifest as PluginManifest;
    if (!PLUGIN_TYPE.test(checked.type)) {
      problems.push(`field "type" must be shaped <Group>/<Name>, got "${checked.type}"`);
    }
    if (!semver.valid(checked.version)) {
      problems.push(`field "version" must be a semver version, got "${checked.version}"`);
    }
    if (checked.main !== undefined && !isInsideRoot(checked.main)) {
      problems.push(`field "main" must be a path inside the package, got "${checked.main}"`);
    }
    problems.push(...specificationProblems(checked.specifications));
    for (const field of ['parameters', 'output'] as const) {
      const schema = checked[field];
      if (schema === undefined) continue;
      try {
        pluginSchemaValidator(schema);
      } catch (error) {
        problems.push(`field "${field}" is not a valid JSON Schema: ${(error as Error).message}`);
      }
    }
  }
  if (problems.length > 0) {
    throw new Invalid(
      problems.map((problem) => `Plugin package ${source}: ${MANIFEST_FILE} ${problem}`),
    );
  }
  return manifest as PluginManifest;
}

function specificationProblems(descriptors: PluginSpecificationDescriptor[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const descriptor of descriptors) {
    if (seen.has(descriptor.key)) {
      problems.push(`specification "${descriptor.key}" is declared twice`);
    }
    seen.add(descriptor.key);
    if (
      descriptor.default !== undefined &&
      !matchesSettingType(descriptor.type, descriptor.default)
    ) {
      problems.push(
        `specification "${descriptor.key}" has a default that is not a ${descriptor.type}`,
      );
    }
  }
  return problems;
}

/** Whether a value is of a specification descriptor's `type`. */
export function matchesSettingType(
  type: PluginSpecificationDescriptor['type'],
  value: unknown,
): boolean {
  return isOfJsonType(type, value);
}

function isInsideRoot(relative: string): boolean {
  const normalised = path.posix.normalize(relative);
  return !path.posix.isAbsolute(normalised) && !normalised.startsWith('..');
}

/** Reads and validates the manifest of a package folder, checking its entry module exists. */
export async function readPackageFolder(dir: string): Promise<PluginManifest> {
  const file = path.join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new Invalid(`Plugin package ${dir}: ${MANIFEST_FILE} is missing`);
  }
  const manifest = parseManifest(parseJson(text, dir), dir);
  const main = path.join(dir, entryModule(manifest));
  try {
    await access(main);
  } catch {
    throw new Invalid(`Plugin package ${dir}: entry module ${entryModule(manifest)} is missing`);
  }
  return manifest;
}

/** The entry module's path relative to the package root. */
export function entryModule(manifest: PluginManifest): string {
  return manifest.main ?? 'index.js';
}

function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new Invalid(
      `Plugin package ${source}: ${MANIFEST_FILE} is not valid JSON (${(error as Error).message})`,
    );
  }
}

/**
 * The files that go into a package: everything except tests, dotfiles and `node_modules`,
 * as sorted POSIX paths so the tarball's entry order never depends on the file system.
 */
export async function packageFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) =>
      path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'),
    )
    .filter(
      (file) =>
        !file.split('/').some((part) => part.startsWith('.') || part === 'node_modules') &&
        !/\.test\.[cm]?[jt]s$/.test(file),
    )
    .sort();
}

// A fixed timestamp and file modes make the same folder produce the same bytes (and sha256)
// on any machine, whatever the checkout time or umask.
const PACKAGE_MTIME = new Date('2000-01-01T00:00:00Z');

/** Packs a package folder into a deterministic gzip'd tarball, validating its manifest first. */
export async function packFolder(dir: string): Promise<Buffer> {
  await readPackageFolder(dir);
  const files = await packageFiles(dir);
  const stream = tar.create(
    {
      cwd: dir,
      gzip: true,
      portable: true,
      mtime: PACKAGE_MTIME,
      onWriteEntry: (entry) => {
        if (entry.stat) entry.stat.mode = (entry.stat.mode & ~0o7777) | 0o644;
      },
    },
    files,
  );
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** Hex sha256 of package bytes: the package's content address. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** How large a package may be (`Plugins.MaxPackageBytes`, `Plugins.MaxUnpackedPackageBytes`). */
export interface PackageLimits {
  /** The tarball as stored and downloaded (gzip'd). */
  maxPackageBytes: number;
  /** The tar stream once gunzipped: every file, plus a header per entry. */
  maxUnpackedBytes: number;
}

/** The package limits a configuration sets. */
export function packageLimits(config: {
  Plugins: { MaxPackageBytes: number; MaxUnpackedPackageBytes: number };
}): PackageLimits {
  return {
    maxPackageBytes: config.Plugins.MaxPackageBytes,
    maxUnpackedBytes: config.Plugins.MaxUnpackedPackageBytes,
  };
}

/** Most entries a package may hold: a plugin is a handful of files, not a file system. */
export const MAX_PACKAGE_ENTRIES = 10_000;

/** A package read whole from its tarball and checked: its manifest and its files. */
export interface PackageContent {
  manifest: PluginManifest;
  /** Folders, as relative POSIX paths. */
  directories: string[];
  /** Files by relative POSIX path. */
  files: Map<string, Buffer>;
}

const gunzipAsync = promisify(gunzip);

/** What a tar entry type is, for a message refusing it. */
const refusedTypes: Record<string, string> = {
  SymbolicLink: 'a symbolic link',
  Link: 'a hard link',
  CharacterDevice: 'a character device',
  BlockDevice: 'a block device',
  FIFO: 'a FIFO',
};

/**
 * Reads a package tarball in memory and checks it whole, before anything is written or stored:
 * it must fit `limits`, be a readable tarball, hold only plain files and folders whose paths stay
 * inside the package (no links, devices, absolute paths or `..`), and carry a valid manifest.
 * Throws `Invalid` naming every bad entry, each prefixed with `source`.
 */
export async function readPackage(
  bytes: Uint8Array,
  source: string,
  limits: PackageLimits,
): Promise<PackageContent> {
  const refuse = (problems: string | string[]): never => {
    throw new Invalid(
      (Array.isArray(problems) ? problems : [problems]).map(
        (problem) => `Plugin package ${source} ${problem}`,
      ),
      { code: PACKAGE_INVALID },
    );
  };
  if (bytes.length > limits.maxPackageBytes) {
    refuse(
      `is ${formatBytes(bytes.length)}, over the ${formatBytes(limits.maxPackageBytes)} limit (Plugins.MaxPackageBytes)`,
    );
  }
  const tooLarge = () =>
    refuse(
      `unpacks to more than ${formatBytes(limits.maxUnpackedBytes)} (Plugins.MaxUnpackedPackageBytes)`,
    );
  let stream: Buffer;
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      stream = await gunzipAsync(bytes, { maxOutputLength: limits.maxUnpackedBytes });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return tooLarge();
      return refuse(`is not a readable tarball: ${(error as Error).message}`);
    }
  } else {
    stream = Buffer.from(bytes);
    if (stream.length > limits.maxUnpackedBytes) return tooLarge();
  }

  const entries = await parseTar(stream).catch((error: unknown) =>
    refuse(`is not a readable tarball: ${(error as Error).message}`),
  );
  const problems: string[] = [];
  const directories: string[] = [];
  const files = new Map<string, Buffer>();
  if (entries.length > MAX_PACKAGE_ENTRIES) {
    refuse(`holds ${entries.length} entries, more than the ${MAX_PACKAGE_ENTRIES} allowed`);
  }
  for (const entry of entries) {
    const problem = entryProblem(entry);
    if (problem !== null) {
      problems.push(`entry ${JSON.stringify(entry.path)} ${problem}`);
      continue;
    }
    const relative = path.posix.normalize(entry.path).replace(/\/$/, '');
    if (relative === '.') continue;
    if (files.has(relative) || directories.includes(relative)) {
      problems.push(`entry ${JSON.stringify(entry.path)} appears twice`);
    } else if (entry.type === 'Directory') {
      directories.push(relative);
    } else {
      files.set(relative, entry.content);
    }
  }
  problems.push(...placementProblems(files, directories));
  if (problems.length > 0) refuse(problems.join('; '));
  const manifestBytes = files.get(MANIFEST_FILE);
  if (manifestBytes === undefined) return refuse(`has no ${MANIFEST_FILE}`);
  const manifest = parseManifest(parseJson(manifestBytes.toString('utf8'), source), source);
  if (!files.has(path.posix.normalize(entryModule(manifest)))) {
    refuse(`has no entry module ${entryModule(manifest)}`);
  }
  return { manifest, directories, files };
}

interface TarEntry {
  path: string;
  type: string;
  content: Buffer;
}

/**
 * Every entry of an uncompressed tar stream, contents included. Each error the parser raises is
 * caught here and the first one rejects: none can escape as an unhandled 'error' event.
 */
function parseTar(stream: Buffer): Promise<TarEntry[]> {
  return new Promise((resolve, reject) => {
    const entries: TarEntry[] = [];
    let failed = false;
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      reject(error instanceof Error ? error : new Error(String(error)));
    };
    const parser = new tar.Parser({
      strict: true,
      onReadEntry: (entry) => {
        const chunks: Buffer[] = [];
        entry.on('data', (chunk: Buffer) => chunks.push(chunk));
        entry.on('end', () =>
          entries.push({ path: entry.path, type: entry.type, content: Buffer.concat(chunks) }),
        );
      },
    });
    parser.on('error', fail);
    parser.on('warn', (_code: string, message: string | Error) => fail(message));
    parser.on('end', () => {
      if (!failed) resolve(entries);
    });
    try {
      parser.end(stream);
    } catch (error) {
      fail(error);
    }
  });
}

/** The stable code of a package refused for its shape or size. */
export const PACKAGE_INVALID = 'plugin.package_invalid';

/** Longest name a file system takes (NAME_MAX), in bytes. */
const MAX_NAME_BYTES = 255;
/**
 * Longest path inside a package, in bytes: the cache folder and the package's sha256 come before
 * it, all within PATH_MAX (4,096).
 */
export const MAX_ENTRY_PATH_BYTES = 1024;

/**
 * Files that cannot be written where the package says: inside a file (`a` and `a/b`), or under a
 * name no file system takes.
 */
function placementProblems(files: Map<string, Buffer>, directories: string[]): string[] {
  const problems: string[] = [];
  for (const entry of [...directories, ...files.keys()]) {
    const bytes = Buffer.byteLength(entry);
    const longest = Math.max(...entry.split('/').map((name) => Buffer.byteLength(name)));
    if (bytes > MAX_ENTRY_PATH_BYTES) {
      problems.push(
        `entry ${JSON.stringify(entry)} has a path of ${bytes} bytes, over the ${MAX_ENTRY_PATH_BYTES} allowed`,
      );
    } else if (longest > MAX_NAME_BYTES) {
      problems.push(
        `entry ${JSON.stringify(entry)} has a name of ${longest} bytes, over the ${MAX_NAME_BYTES} a file system allows`,
      );
    }
    const parents = entry.split('/').slice(0, -1);
    const blocking = parents
      .map((_, depth) => parents.slice(0, depth + 1).join('/'))
      .find((parent) => files.has(parent));
    if (blocking !== undefined) {
      problems.push(
        `entry ${JSON.stringify(entry)} is inside ${JSON.stringify(blocking)}, which is a file`,
      );
    }
  }
  return problems;
}

/** Why a tar entry cannot be part of a package, or null when it is a plain file or folder. */
function entryProblem(entry: TarEntry): string | null {
  const refused = refusedTypes[entry.type];
  if (refused !== undefined) return `is ${refused}`;
  if (!['File', 'OldFile', 'ContiguousFile', 'Directory'].includes(entry.type)) {
    return `is a ${entry.type} entry, not a file or folder`;
  }
  if (entry.path === '' || entry.path.includes('\0')) return 'has no usable path';
  if (path.posix.isAbsolute(entry.path) || /^[A-Za-z]:/.test(entry.path)) {
    return 'is an absolute path';
  }
  if (entry.path.split(/[\\/]/).includes('..')) return 'climbs out of the package';
  return null;
}

/**
 * Where unpacked packages live, one folder per sha256: `Plugins.CacheDirectory` (by default
 * `<DataDirectory>/plugin-cache`), so the install folder and its `node_modules` may be read-only
 * at run time. Node resolves a plugin's bare imports (`jsonata`, `pg`...) by walking up from the
 * plugin's file; the cache holds a `node_modules` link to the host's, so that walk finds what
 * Trellis installed and plugins need no `node_modules` of their own (`prepareCacheDirectory`).
 */
export function pluginCacheDirectory(config: { Plugins: { CacheDirectory: string } }): string {
  return config.Plugins.CacheDirectory;
}

/** Creates the cache folder and its `node_modules` link to the host's packages. */
export async function prepareCacheDirectory(cacheDirectory: string): Promise<void> {
  await mkdir(cacheDirectory, { recursive: true });
  const link = path.join(cacheDirectory, 'node_modules');
  const target = installPath('node_modules');
  const current = await readlink(link).catch(() => null);
  if (current === target) return;
  if (current !== null) await rm(link, { force: true });
  await symlink(target, link, 'dir').catch((error: NodeJS.ErrnoException) => {
    // Another worker made the same link at the same moment.
    if (error.code !== 'EEXIST') throw error;
  });
}

/** The cache folder of a package, whether or not it is unpacked yet. */
export function cachedPackageDirectory(sha256: string, cacheDirectory: string): string {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`Not a sha256: ${sha256}`);
  return path.join(cacheDirectory, sha256);
}

/** Whether a package is already unpacked in the cache. */
export async function isCached(sha256: string, cacheDirectory: string): Promise<boolean> {
  try {
    await access(path.join(cachedPackageDirectory(sha256, cacheDirectory), MANIFEST_FILE));
    return true;
  } catch {
    return false;
  }
}

/**
 * Unpacks package bytes into `<cacheDirectory>/<sha256>/` (verifying the hash) and returns that
 * folder. The package is checked whole first (`readPackage`: a package stored before a check
 * existed is refused here, with `Invalid`), then its files are written one by one: nothing in the
 * tarball decides what is created. Unpacking goes to a staging folder renamed into place, so
 * concurrent workers never see a half-written package; whoever renames first wins and the content
 * is the same. The staging folder's name carries this process's id, for `removeStaleStaging`.
 */
export async function unpackPackage(
  bytes: Uint8Array,
  sha256: string,
  cacheDirectory: string,
  limits: PackageLimits,
): Promise<string> {
  const target = cachedPackageDirectory(sha256, cacheDirectory);
  if (await isCached(sha256, cacheDirectory)) return target;
  const actual = sha256Hex(bytes);
  if (actual !== sha256) {
    throw new Error(`Plugin package checksum mismatch: expected sha256 ${sha256}, got ${actual}`);
  }
  const content = await readPackage(bytes, sha256, limits);
  const staging = `${target}.tmp-${process.pid}-${randomUUID()}`;
  const release = claimFolder(staging);
  await mkdir(staging, { recursive: true });
  try {
    for (const directory of content.directories) {
      await mkdir(path.join(staging, directory), { recursive: true });
    }
    for (const [file, data] of content.files) {
      await mkdir(path.dirname(path.join(staging, file)), { recursive: true });
      await writeFile(path.join(staging, file), data, { flag: 'wx', mode: 0o644 });
    }
    await rename(staging, target).catch(async (error: NodeJS.ErrnoException) => {
      if (!(await isCached(sha256, cacheDirectory))) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
    release();
  }
  return target;
}

/**
 * Staging folders of `unpackPackage`: `<sha256>.tmp-<pid>-<uuid>`, or without the pid as earlier
 * versions named them (stale once older than any unpack takes).
 */
const stagingFolders = {
  name: /^[0-9a-f]{64}\.tmp-(?:(?<owner>\d+)-)?[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$/,
  unownedIsStale: (folder: string) => olderThan(folder, 10 * 60 * 1000),
};

/**
 * Removes the staging folders a process killed while unpacking left in the cache (its process
 * is gone); returns them. Run at start-up.
 */
export function removeStaleStaging(cacheDirectory: string): Promise<string[]> {
  return removeStaleFolders(cacheDirectory, stagingFolders);
}
