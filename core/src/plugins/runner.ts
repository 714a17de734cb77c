import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ValidateFunction } from 'ajv';
import type { Kysely } from 'kysely';
import type { TrellisConfig } from '../config/types.js';
import * as pluginRepository from '../db/plugin-repository.js';
import type { InstalledPlugin } from '../db/plugin-repository.js';
import type { Database, LogLevel } from '../db/tables.js';
import { Invalid } from '../errors.js';
import { pluginSchemaValidator } from '../validation/ajv.js';
import type {
  PluginContext,
  PluginExecute,
  PluginHostSettings,
  PluginLogger,
  PluginManifest,
} from './contract.js';
import {
  pluginCacheDirectory,
  prepareCacheDirectory,
  entryModule,
  formatBytes,
  isCached,
  packageLimits,
  readPackageFolder,
  unpackPackage,
  cachedPackageDirectory,
} from './package.js';
import { validationProblems } from './schema.js';
import {
  REDACTED,
  checkConfigurationSpecifications,
  decryptSecrets,
  isEncrypted,
  loadEncryptionKey,
} from './settings.js';

/**
 * Runs installed plugins: finds the installed row, loads its package from the local
 * content-addressed cache (filled from the database on a miss, so a plugin installed through
 * any API process runs on any worker without a restart), checks the task's input, calls
 * `execute` and checks its output. Knows nothing of Temporal.
 */

/**
 * A failure retrying cannot fix: the plugin is not installed, the parameters or settings are
 * wrong, the output is unusable, or the plugin marked its error `nonRetryable`.
 */
export class PluginInputError extends Error {
  readonly nonRetryable = true;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PluginInputError';
  }
}

/** The plugin failed while running (network down, remote error...): worth retrying. */
export class PluginRuntimeError extends Error {
  readonly nonRetryable = false;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PluginRuntimeError';
  }
}

export interface PluginRunRequest {
  type: string;
  /** Absent (or `latest`): the highest installed version. */
  version?: string;
  /** Settings from the configuration and the task's inline ones; `enc:v1:` values are decrypted here. */
  specifications?: Record<string, unknown>;
  /** The task's parameters, expressions already resolved. */
  parameters?: Record<string, unknown>;
  /** Fires on cancel or timeout; when it has fired, `run` rejects with its `reason`. */
  signal?: AbortSignal;
  logger: PluginLogger;
  heartbeat?: (details?: unknown) => void;
  task: PluginContext['task'];
}

export interface PluginRunner {
  /** Runs a task's plugin and returns its (JSON-clean) output. */
  run(request: PluginRunRequest): Promise<unknown>;
  /**
   * The manifest of the package a run of `type` at `version` (absent or `latest`: the highest)
   * would load now; undefined when none is installed.
   */
  installedManifest(type: string, version?: string): Promise<PluginManifest | undefined>;
}

/** A plugin package loaded and ready to execute. */
export interface LoadedPlugin {
  manifest: PluginManifest;
  execute: PluginExecute;
  validateParameters: ValidateFunction;
}

/** What the host imposes on every run. */
export interface RunLimits {
  host: PluginHostSettings;
  maxOutputBytes: number;
  /** Decrypts `enc:v1:` settings; only asked for when a run has such a value. */
  encryptionKey?: () => Promise<Buffer>;
}

/** How long the runner reuses an installed plugin's row (see `installedRow`). */
const INSTALLED_ROW_TTL_MS = 2000;
const MAX_INSTALLED_ROWS = 500;

export function createPluginRunner(deps: {
  db: Kysely<Database>;
  config: TrellisConfig;
  logger?: { debug(details: object, message: string): void };
  /** Where packages are unpacked; defaults to `pluginCacheDirectory(config)`. */
  cacheDirectory?: string;
}): PluginRunner {
  const { db, config } = deps;
  const cacheDirectory = deps.cacheDirectory ?? pluginCacheDirectory(config);
  let cacheReady: Promise<void> | undefined;
  const loaded = new Map<string, Promise<LoadedPlugin>>();
  let key: Promise<Buffer> | undefined;
  const limits: RunLimits = {
    host: hostSettings(config),
    maxOutputBytes: config.Plugins.MaxOutputBytes,
    encryptionKey: () => (key ??= loadEncryptionKey(config)),
  };

  async function loadPackage(sha256: string): Promise<LoadedPlugin> {
    if (!(await isCached(sha256, cacheDirectory))) {
      await (cacheReady ??= prepareCacheDirectory(cacheDirectory)).catch((error: unknown) => {
        cacheReady = undefined;
        throw error;
      });
      const bytes = await pluginRepository.findPackage(db, sha256);
      if (!bytes) throw new PluginInputError(`Plugin package ${sha256} is no longer installed`);
      await unpackPackage(bytes, sha256, cacheDirectory, packageLimits(config)).catch(
        (error: unknown) => {
          // A package stored before today's checks, or damaged: no retry can fix it.
          throw error instanceof Invalid
            ? new PluginInputError(`Plugin package cannot be unpacked: ${error.message}`)
            : error;
        },
      );
      deps.logger?.debug({ sha256, cacheDirectory }, 'Unpacked plugin package into the cache');
    }
    return loadPluginFolder(cachedPackageDirectory(sha256, cacheDirectory));
  }

  // Every attempt of every task asks which package runs it: a row found is reused for a moment.
  // A miss is never remembered, so a plugin just installed runs at once; an uninstall or a newer
  // latest version is seen within INSTALLED_ROW_TTL_MS.
  const installedRows = new Map<string, { row: InstalledPlugin; expiresAt: number }>();
  async function installedRow(type: string, version: string | undefined) {
    const key = `${type}\n${version ?? 'latest'}`;
    const cached = installedRows.get(key);
    if (cached && cached.expiresAt > Date.now()) return cached.row;
    installedRows.delete(key);
    const row =
      version !== undefined
        ? await pluginRepository.findByTypeVersion(db, type, version)
        : await pluginRepository.latestByType(db, type);
    if (row) {
      installedRows.set(key, { row, expiresAt: Date.now() + INSTALLED_ROW_TTL_MS });
      if (installedRows.size > MAX_INSTALLED_ROWS) {
        installedRows.delete(installedRows.keys().next().value!);
      }
    }
    return row;
  }

  /** The installed package of `type` at a pinned version (or the highest), loaded once. */
  async function installedPlugin(
    type: string,
    pinned: string | undefined,
  ): Promise<LoadedPlugin | undefined> {
    const row = await installedRow(type, pinned);
    if (!row) return undefined;
    let plugin = loaded.get(row.sha256);
    if (!plugin) {
      plugin = loadPackage(row.sha256);
      loaded.set(row.sha256, plugin);
      plugin.catch(() => loaded.delete(row.sha256));
    }
    return plugin;
  }

  return {
    async run(request) {
      const pinned = pinnedVersion(request.version);
      const plugin = await installedPlugin(request.type, pinned);
      if (!plugin) {
        throw new PluginInputError(
          `Plugin "${request.type}"${pinned ? ` ${pinned}` : ''} is not installed; install it with POST /plugins`,
        );
      }
      return executePlugin(plugin, request, limits);
    },
    async installedManifest(type, version) {
      return (await installedPlugin(type, pinnedVersion(version)))?.manifest;
    },
  };
}

/** The version a task asks for, or undefined when it takes the highest installed. */
function pinnedVersion(version: string | undefined): string | undefined {
  return version && version.toLowerCase() !== 'latest' ? version : undefined;
}

/** The host settings a configuration gives plugins. */
export function hostSettings(config: Pick<TrellisConfig, 'Plugins'>): PluginHostSettings {
  return {
    storageRoot: path.resolve(config.Plugins.StorageRoot),
    allowProcessExecution: config.Plugins.AllowProcessExecution,
  };
}

/** Loads an unpacked package folder: validated manifest, imported module, compiled schema. */
export async function loadPluginFolder(dir: string): Promise<LoadedPlugin> {
  const manifest = await readPackageFolder(dir);
  const module = (await import(pathToFileURL(path.join(dir, entryModule(manifest))).href)) as {
    execute?: unknown;
  };
  if (typeof module.execute !== 'function') {
    throw new PluginInputError(
      `Plugin "${manifest.type}" ${manifest.version} does not export an execute function`,
    );
  }
  return {
    manifest,
    execute: module.execute as PluginExecute,
    validateParameters: pluginSchemaValidator(manifest.parameters ?? {}),
  };
}

/**
 * Runs a loaded plugin the way the engine does: settings (defaults, then the given ones,
 * decrypted and checked), parameters checked against the manifest's schema (its defaults
 * filled in), `execute`, and the output checked to be JSON within `maxOutputBytes`.
 */
export async function executePlugin(
  plugin: LoadedPlugin,
  request: Omit<PluginRunRequest, 'type' | 'version'>,
  limits: RunLimits,
): Promise<unknown> {
  const { manifest } = plugin;
  const name = `Plugin "${manifest.type}" ${manifest.version}`;

  let given = request.specifications ?? {};
  if (limits.encryptionKey && Object.values(given).some(isEncrypted)) {
    given = decryptSecrets(manifest.specifications, given, await limits.encryptionKey());
  }
  const specifications = { ...specificationDefaults(manifest), ...withoutNulls(given) };
  const settingProblems = checkConfigurationSpecifications(manifest.specifications, specifications);
  if (settingProblems.length > 0) {
    throw new PluginInputError(`${name}: ${settingProblems.join('; ')}`);
  }

  const parameters = structuredClone(request.parameters ?? {});
  const parameterProblems = validationProblems(plugin.validateParameters, parameters, 'parameter');
  if (parameterProblems.length > 0) {
    throw new PluginInputError(`${name}: ${parameterProblems.join('; ')}`);
  }

  const signal = request.signal ?? new AbortController().signal;
  signal.throwIfAborted();
  const context: PluginContext = {
    specifications: Object.freeze(specifications),
    logger: redactingLogger(request.logger, secretValues(manifest, specifications)),
    signal,
    heartbeat: request.heartbeat ?? (() => {}),
    task: request.task,
    host: Object.freeze({ ...limits.host }),
  };

  let output: unknown;
  try {
    output = await plugin.execute(parameters, context);
  } catch (error) {
    signal.throwIfAborted();
    const message = error instanceof Error ? error.message : String(error);
    if ((error as { nonRetryable?: unknown } | null)?.nonRetryable === true) {
      throw new PluginInputError(message, { cause: error });
    }
    throw new PluginRuntimeError(message, { cause: error });
  }
  return checkedOutput(name, output, limits.maxOutputBytes);
}

function checkedOutput(name: string, output: unknown, maxOutputBytes: number): unknown {
  let json: string | undefined;
  try {
    json = JSON.stringify(output ?? null);
  } catch (error) {
    throw new PluginInputError(
      `${name} returned an output that is not JSON-serialisable: ${(error as Error).message}`,
    );
  }
  if (json === undefined) return null;
  const size = Buffer.byteLength(json);
  if (size > maxOutputBytes) {
    throw new PluginInputError(
      `${name} returned ${formatBytes(size)} of output, over the ${formatBytes(maxOutputBytes)} limit (Plugins.MaxOutputBytes); return less, e.g. write large data to storage and return its path`,
    );
  }
  return JSON.parse(json) as unknown;
}

function specificationDefaults(manifest: PluginManifest): Record<string, unknown> {
  return Object.fromEntries(
    manifest.specifications
      .filter((descriptor) => descriptor.default !== undefined)
      .map((descriptor) => [descriptor.key, structuredClone(descriptor.default)]),
  );
}

function withoutNulls(settings: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value != null));
}

function secretValues(manifest: PluginManifest, specifications: Record<string, unknown>): string[] {
  return manifest.specifications
    .filter((descriptor) => descriptor.secret)
    .map((descriptor) => specifications[descriptor.key])
    .filter((value) => value !== undefined && value !== null)
    .map((value) => (typeof value === 'string' ? value : JSON.stringify(value)))
    .filter((value) => value.length > 0);
}

/** A `PluginLogger` over one function, so a sink only has to handle `log`. */
export function createPluginLogger(
  write: (level: LogLevel, message: string, exception?: string) => void,
): PluginLogger {
  return {
    log: write,
    trace: (message) => write('Trace', message),
    debug: (message) => write('Debug', message),
    info: (message) => write('Info', message),
    warning: (message) => write('Warning', message),
    error: (message, exception) => write('Error', message, exception),
    critical: (message, exception) => write('Critical', message, exception),
  };
}

// Secret settings never reach task logs, even when a plugin echoes them.
function redactingLogger(logger: PluginLogger, secrets: string[]): PluginLogger {
  if (secrets.length === 0) return logger;
  const redact = (text: string) =>
    secrets.reduce((result, secret) => result.split(secret).join(REDACTED), text);
  return createPluginLogger((level, message, exception) =>
    logger.log(level, redact(message), exception === undefined ? undefined : redact(exception)),
  );
}
