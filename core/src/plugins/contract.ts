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
  /**
   * Built-ins only: the plugin's work is trivially bounded (no user code or expression, no
   * unbounded input), so it runs on the worker's own thread instead of in a sandbox process.
   * Refused in any other package; default false.
   */
  inProcess?: boolean;
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
) => Promise<unknown> | unknown;

export interface PluginModule {
  execute: PluginExecute;
}
