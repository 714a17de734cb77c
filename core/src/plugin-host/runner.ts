import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ValidateFunction } from 'ajv';
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { TrellisConfig } from '#platform/config/types.js';
import * as pluginRepository from '#store/plugin-repository.js';
import type { InstalledPlugin } from '#store/plugin-repository.js';
import type { Database, LogLevel } from '#store/tables.js';
import { Invalid } from '#definition/errors.js';
import { pluginSchemaValidator } from '#definition/validation/ajv.js';
import type {
  PluginContext,
  PluginExecute,
  PluginHostSettings,
  PluginLogger,
  PluginManifest,
  PluginTraceContext,
} from './contract.js';
import { outputNotJson, outputTooLarge, PluginInputError, pluginFailure } from './failures.js';
import {
  pluginCacheDirectory,
  prepareCacheDirectory,
  entryModule,
  isCached,
  packageLimits,
  readPackageFolder,
  unpackPackage,
  cachedPackageDirectory,
} from './package.js';
import { descendantListeningPorts } from './listening-ports.js';
import { reachSettings, type RuntimeReach } from './reach.js';
import { redactError, redactOutput, secretRedactor } from './redaction.js';
import { createSandboxPool, type SandboxPool } from './sandbox/pool.js';
import { sandboxSettings, type SandboxProfile } from './sandbox/sandbox-settings.js';
import { validationProblems } from '#definition/validation/plugin-wording.js';
import {
  checkConfigurationSpecifications,
  decryptSecrets,
  isEncrypted,
  loadSecretKeys,
  type SecretKeys,
} from './settings.js';

/**
 * Runs installed plugins: finds the installed row, loads its package from the local
 * content-addressed cache (filled from the database on a miss, so a plugin installed through
 * any API process runs on any worker without a restart), checks the task's input, calls
 * `execute` and checks its output. Knows nothing of Temporal.
 */

export { PluginInputError, PluginRuntimeError } from './failures.js';

export interface PluginRunRequest {
  type: string;
  /** Absent (or `latest`): the highest installed version. */
  version?: string;
  /** Settings from the configuration and the task's inline ones; `enc:` values are decrypted here. */
  specifications?: Record<string, unknown>;
  /** The task's parameters, expressions already resolved. */
  parameters?: Record<string, unknown>;
  /** Fires on cancel or timeout; when it has fired, `run` rejects with its `reason`. */
  signal?: AbortSignal;
  /** The task's own time limit (enforced through `signal`); a sandbox has its own without it. */
  timeoutMilliseconds?: number;
  logger: PluginLogger;
  heartbeat?: (details?: unknown) => void;
  task: PluginContext['task'];
  /** The trace context the plugin carries on (tracing on). */
  trace?: PluginTraceContext;
}

export interface PluginRunner {
  /** Runs a task's plugin and returns its (JSON-clean) output. */
  run(request: PluginRunRequest): Promise<unknown>;
  /**
   * The manifest of the package a run of `type` at `version` (absent or `latest`: the highest)
   * would load now; undefined when none is installed.
   */
  installedManifest(type: string, version?: string): Promise<PluginManifest | undefined>;
  /** Stops the sandbox processes (the worker is stopping). */
  close(): Promise<void>;
}

/** Who wrote a package: Trellis (`plugins/`), or anyone else. */
export type PluginOrigin = 'builtin' | 'third-party';

/**
 * A plugin package loaded and ready to execute: in the worker's process (a built-in whose
 * manifest says `inProcess`, its module imported) or in a sandbox process.
 */
export type LoadedPlugin = {
  manifest: PluginManifest;
  validateParameters: ValidateFunction;
  /** The unpacked package (its path as given and its real path): error frames are shown relative to it. */
  directories: string[];
} & ({ runs: 'in-process'; execute: PluginExecute } | { runs: SandboxProfile });

/** What the host imposes on every run. */
export interface RunLimits {
  host: PluginHostSettings;
  maxOutputBytes: number;
  /** Decrypts `enc:` settings; only asked for when a run has such a value. */
  encryptionKey?: () => Promise<SecretKeys>;
  /** Where sandboxed plugins run; asked for on their first run. */
  sandbox: () => SandboxPool;
}

/** How long the runner reuses an installed plugin's row (see `installedRow`). */
const INSTALLED_ROW_TTL_MS = 2000;
const MAX_INSTALLED_ROWS = 500;
/** How long the ports child processes listen on are taken as read. */
const OWN_PORTS_TTL_MS = 5000;

export function createPluginRunner(deps: {
  db: Kysely<Database>;
  config: TrellisConfig;
  logger?: {
    debug(details: object, message: string): void;
    warn(details: object, message: string): void;
  };
  /** Where packages are unpacked; defaults to `pluginCacheDirectory(config)`. */
  cacheDirectory?: string;
  /** Where this process listens and keeps its embedded database, which plugins must not reach. */
  reach?: RuntimeReach;
}): PluginRunner {
  const { db, config } = deps;
  const cacheDirectory = deps.cacheDirectory ?? pluginCacheDirectory(config);
  let cacheReady: Promise<void> | undefined;
  const loaded = new Map<string, Promise<LoadedPlugin>>();
  let keys: Promise<SecretKeys> | undefined;
  let sandbox: SandboxPool | undefined;
  const limits: Omit<RunLimits, 'host'> = {
    maxOutputBytes: config.Plugins.MaxOutputBytes,
    encryptionKey: () => (keys ??= loadSecretKeys(config)),
    sandbox: () => (sandbox ??= createSandboxPool(sandboxSettings(config), deps.logger)),
  };

  // The fence's own ports include those child processes listen on, which come and go (the
  // embedded Temporal picks some at start, sandboxes start and stop): read again now and then.
  let host: { settings: Promise<PluginHostSettings>; readAt: number } | undefined;
  function currentHost(): Promise<PluginHostSettings> {
    if (!host || Date.now() - host.readAt > OWN_PORTS_TTL_MS) {
      const settings = descendantListeningPorts().then((ports) =>
        hostSettings(config, { ...deps.reach, ports }),
      );
      host = { settings, readAt: Date.now() };
    }
    return host.settings;
  }

  async function loadPackage(sha256: string, origin: PluginOrigin): Promise<LoadedPlugin> {
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
          if (error instanceof Invalid) {
            throw new PluginInputError(`Plugin package cannot be unpacked: ${error.message}`);
          }
          // The file system's message names the cache folder, which is the server's business.
          deps.logger?.warn({ err: error, sha256, cacheDirectory }, 'Plugin package unpack failed');
          const code = (error as NodeJS.ErrnoException).code;
          throw new Error(
            `Plugin package ${sha256} could not be unpacked into the plugin cache` +
              `${code ? ` (${code})` : ''}; the worker's log says where and why`,
          );
        },
      );
      deps.logger?.debug({ sha256, cacheDirectory }, 'Unpacked plugin package into the cache');
    }
    return loadPluginFolder(cachedPackageDirectory(sha256, cacheDirectory), origin);
  }

  // Every attempt of every task asks which package runs it: a row found is reused for a moment.
  // A miss is never remembered, so a plugin just installed runs at once; an uninstall or a newer
  // latest version is seen within INSTALLED_ROW_TTL_MS.
  const installedRows = new LRUCache<string, InstalledPlugin>({
    max: MAX_INSTALLED_ROWS,
    ttl: INSTALLED_ROW_TTL_MS,
  });
  async function installedRow(type: string, version: string | undefined) {
    const key = `${type}\n${version ?? 'latest'}`;
    const cached = installedRows.get(key);
    if (cached) return cached;
    const row =
      version !== undefined
        ? await pluginRepository.findByTypeVersion(db, type, version)
        : await pluginRepository.latestByType(db, type);
    if (row) installedRows.set(key, row);
    return row;
  }

  /** The installed package of `type` at a pinned version (or the highest), loaded once. */
  async function installedPlugin(
    type: string,
    pinned: string | undefined,
  ): Promise<LoadedPlugin | undefined> {
    const row = await installedRow(type, pinned);
    if (!row) return undefined;
    // Only a package installed from plugins/ is a built-in, whatever its manifest says.
    const origin = row.source === 'builtin' ? 'builtin' : 'third-party';
    const key = `${origin}:${row.sha256}`;
    let plugin = loaded.get(key);
    if (!plugin) {
      plugin = loadPackage(row.sha256, origin);
      loaded.set(key, plugin);
      plugin.catch(() => loaded.delete(key));
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
      return executePlugin(plugin, request, { ...limits, host: await currentHost() });
    },
    async installedManifest(type, version) {
      return (await installedPlugin(type, pinnedVersion(version)))?.manifest;
    },
    async close() {
      await sandbox?.close();
    },
  };
}

/** The version a task asks for, or undefined when it takes the highest installed. */
function pinnedVersion(version: string | undefined): string | undefined {
  return version && version.toLowerCase() !== 'latest' ? version : undefined;
}

/** The host settings a configuration gives plugins. */
export function hostSettings(config: TrellisConfig, runtime?: RuntimeReach): PluginHostSettings {
  return {
    storageRoot: path.resolve(config.Plugins.StorageRoot),
    allowProcessExecution: config.Plugins.AllowProcessExecution,
    maxStatementTimeoutMilliseconds: config.Plugins.Database.MaxStatementTimeoutMilliseconds,
    ...reachSettings(config, runtime),
  };
}

/**
 * Loads an unpacked package folder: validated manifest and compiled schema; for a built-in whose
 * manifest says `inProcess`, the imported module. Any other package's code is never imported
 * here: it runs in a sandbox process (third-party code in the stricter one).
 */
export async function loadPluginFolder(dir: string, origin: PluginOrigin): Promise<LoadedPlugin> {
  const manifest = await readPackageFolder(dir);
  const loaded = {
    manifest,
    validateParameters: pluginSchemaValidator(manifest.parameters ?? {}),
    directories: [...new Set([dir, await realpath(dir)])],
  };
  if (origin !== 'builtin' || manifest.inProcess !== true) return { ...loaded, runs: origin };
  const module = (await import(pathToFileURL(path.join(dir, entryModule(manifest))).href)) as {
    execute?: unknown;
  };
  if (typeof module.execute !== 'function') {
    throw new PluginInputError(
      `Plugin "${manifest.type}" ${manifest.version} does not export an execute function`,
    );
  }
  return { ...loaded, runs: 'in-process', execute: module.execute as PluginExecute };
}

/**
 * Runs a loaded plugin the way the engine does: settings (defaults, then the given ones,
 * decrypted and checked), parameters checked against the manifest's schema (its defaults
 * filled in), `execute` (in process or in a sandbox), and the output checked to be JSON within
 * `maxOutputBytes`. A plugin's error comes back with its own frames only, secrets redacted.
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
  const secrets = secretValues(manifest, specifications);
  const redact = secretRedactor(secrets);
  const context: PluginContext = {
    specifications: Object.freeze(specifications),
    logger: redactingLogger(request.logger, secrets),
    signal,
    heartbeat: request.heartbeat ?? (() => {}),
    task: request.task,
    host: Object.freeze({ ...limits.host }),
    ...(request.trace && { trace: Object.freeze({ ...request.trace }) }),
  };

  let output: unknown;
  try {
    output =
      plugin.runs === 'in-process'
        ? await plugin.execute(parameters, context)
        : await limits.sandbox().run({
            ...context,
            name,
            profile: plugin.runs,
            directory: plugin.directories[0]!,
            entry: entryModule(manifest),
            parameters,
            ...(request.timeoutMilliseconds !== undefined
              ? { timeoutMilliseconds: request.timeoutMilliseconds }
              : {}),
          });
  } catch (error) {
    signal.throwIfAborted();
    // In place too: the original stays attached as the failure's cause.
    throw pluginFailure(redactError(error, secrets), plugin.directories, redact);
  }
  return redactOutput(checkedOutput(name, output, limits.maxOutputBytes), secrets);
}

function checkedOutput(name: string, output: unknown, maxOutputBytes: number): unknown {
  let json: string | undefined;
  try {
    json = JSON.stringify(output ?? null);
  } catch (error) {
    throw outputNotJson(name, (error as Error).message);
  }
  if (json === undefined) return null;
  const size = Buffer.byteLength(json);
  if (size > maxOutputBytes) throw outputTooLarge(name, size, maxOutputBytes);
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
  const redact = secretRedactor(secrets);
  return createPluginLogger((level, message, exception) =>
    logger.log(level, redact(message), exception === undefined ? undefined : redact(exception)),
  );
}
