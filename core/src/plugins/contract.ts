import type { LogLevel, PluginSpecificationDescriptor } from '../db/tables.js';

/**
 * The plugin contract: what a plugin package provides and what the engine gives it.
 * A third-party plugin depends on nothing else of Trellis.
 *
 * A package is a folder (or a gzip'd tarball of one) holding `plugin.json` (the manifest)
 * and the ES module named by `manifest.main` (default `index.js`) exporting `execute`.
 */
export interface PluginManifest {
  /** `<group>/<name>`, e.g. `Net/Http`. */
  type: string;
  /** Semver. */
  version: string;
  description: string;
  /** The settings the plugin takes (from a task's inline `specifications` or a `/config`). */
  specifications: PluginSpecificationDescriptor[];
  /** JSON Schema of the task `parameters`; checked before `execute` runs. */
  parameters?: Record<string, unknown>;
  /** Entry module, relative to the package root. Defaults to `index.js`. */
  main?: string;
  /**
   * The plugin finishes in well under a second without waiting on the network or other
   * processes, so the engine runs it as a Temporal local activity inside the worker running the
   * workflow. Default false.
   */
  quick?: boolean;
}

export interface PluginLogger {
  log(level: LogLevel, message: string, exception?: string): void;
  trace(message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warning(message: string): void;
  error(message: string, exception?: string): void;
  critical(message: string, exception?: string): void;
}

export interface PluginContext {
  /** Resolved settings: defaults, then the configuration's, then the task's inline ones. */
  specifications: Readonly<Record<string, unknown>>;
  logger: PluginLogger;
  /** Fires on cancel or timeout; a plugin stops promptly when it does. */
  signal: AbortSignal;
  /** Tells the engine the plugin is alive (long-running work should call it now and then). */
  heartbeat(details?: unknown): void;
  /** Names of the task and execution, for messages. */
  task: { name: string; executionId: string; attempt: number };
  /** Settings of the Trellis installation; the runner sets them and a task cannot override them. */
  host: PluginHostSettings;
}

/** What the host (Trellis configuration `Plugins.*`) tells every plugin. */
export interface PluginHostSettings {
  /** Folder file-storage plugins must stay inside (`Plugins.StorageRoot`), absolute. */
  storageRoot: string;
  /** Whether plugins may start local processes (`Plugins.AllowProcessExecution`). */
  allowProcessExecution: boolean;
  /**
   * Where network plugins may connect (`Plugins.Network.*`). A plugin checks every address it
   * connects to, after DNS resolution and on every redirect, in this order: `denyCidrs` refuse,
   * `trellisEndpoints` refuse, `allowCidrs` allow, `defaultDenyCidrs` refuse, anything else is
   * allowed.
   */
  network: PluginNetworkFence;
  /**
   * Trellis's own database, which database plugins refuse to connect to; null when
   * `Plugins.Database.AllowTrellisDatabase` is true.
   */
  trellisDatabase: TrellisDatabaseAddress | null;
}

export interface PluginNetworkFence {
  /** Refused whatever else says (`Plugins.Network.DenyCidrs`). */
  denyCidrs: readonly string[];
  /**
   * Trellis's own listening sockets (its API, Temporal and the embedded Temporal's HTTP API and
   * UI): refused even inside allowed ranges. `host` is an IP address or a name to resolve (a
   * socket on `0.0.0.0` or `::` is listed once per address of this machine).
   */
  trellisEndpoints: readonly { host: string; port: number }[];
  /** Reachable although inside `defaultDenyCidrs` (`Plugins.Network.AllowCidrs`). */
  allowCidrs: readonly string[];
  /** Refused unless allowed: unspecified, loopback, link-local, cloud metadata, multicast. */
  defaultDenyCidrs: readonly string[];
}

/** Where Trellis keeps its own data. */
export interface TrellisDatabaseAddress {
  /** The folder of the embedded database's Unix socket. */
  socketDirectory?: string;
  /** The external database (`Database.Url`): host name or address, port and database name. */
  host?: string;
  port?: number;
  database?: string;
}

/**
 * A plugin module's export. The result must be JSON-serialisable.
 *
 * A thrown error is a runtime failure the engine may retry. A plugin marks an error that
 * retrying cannot fix (bad input, a forbidden action) by setting `nonRetryable: true` on it,
 * e.g. `throw Object.assign(new Error('...'), { nonRetryable: true })`.
 */
export type PluginExecute = (
  parameters: Record<string, unknown>,
  context: PluginContext,
) => unknown; // the result, or a promise of it

export interface PluginModule {
  execute: PluginExecute;
}
