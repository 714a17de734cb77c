/**
 * @trellis/plugin-kit: the contract between Trellis and a plugin package, as types (and one
 * error helper). A plugin package is a folder holding `plugin.json` (a `PluginManifest`) and an
 * ES module exporting `execute` (a `PluginExecute`); it depends on nothing else of Trellis.
 * Plain JavaScript plugins use the types from JSDoc, e.g. a `@type` tag of
 * `import('@trellis/plugin-kit').PluginExecute<Parameters>` on `execute` (see README.md).
 */

/** The level of a task log entry. */
export type LogLevel = 'Trace' | 'Debug' | 'Info' | 'Warning' | 'Error' | 'Critical';

/** A JSON Schema (draft-07, as plugin authors write them). */
export type JsonSchema = { [keyword: string]: unknown };

/** The JSON type of a setting's value. */
export type SpecificationType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array';

/** One setting a plugin takes, given by a `/config` configuration or inline in a task's `type`. */
export interface PluginSpecification {
  /** The setting's key: letters, digits and `_`, not starting with a digit. */
  key: string;
  type: SpecificationType;
  /** Whether a configuration must give it. Default false. */
  required: boolean;
  /** Encrypted at rest, shown as `********` and scrubbed from task logs. Default false. */
  secret: boolean;
  /**
   * The setting decides where the plugin sends its secret settings (a base URL, a host): a
   * configuration update that changes it must give the secrets again, not `********`. Default
   * false.
   */
  destination?: boolean;
  /** What the setting means. */
  description: string;
  /** The value used when none is given (of `type`). */
  default?: unknown;
}

/**
 * What a plugin's tasks do beyond computing their output, from narrowest to widest:
 * - `pure`: computes from its parameters and settings only (its task log aside);
 * - `reads`: reads state outside the run (files, a database, a service) and changes none;
 * - `writes`: changes state outside the run (writes or deletes files, database rows);
 * - `calls`: calls another system or program whose effects Trellis cannot know.
 * A plugin whose effect depends on its parameters (a read or a write) declares the widest.
 */
export type PluginEffects = 'pure' | 'reads' | 'writes' | 'calls';

/** `plugin.json`: what a plugin package is and what it takes and returns. */
export interface PluginManifest {
  /** `<Group>/<Name>`, e.g. `Net/Http`. */
  type: string;
  /** Semver. */
  version: string;
  description: string;
  /** The settings the plugin takes (from a task's inline `specifications` or a `/config`). */
  specifications: PluginSpecification[];
  /**
   * JSON Schema of the task `parameters`. Checked when a workflow is added or updated (values
   * holding `$[...]` expressions are checked once resolved) and again before `execute` runs, with
   * its `default`s filled in. Absent: any parameters.
   */
  parameters?: JsonSchema;
  /** JSON Schema of what `execute` returns (later tasks read it as `Outputs('Task')`). Absent: anything. */
  output?: JsonSchema;
  /**
   * What the plugin's tasks do (`PluginEffects`). Absent: `calls`, the widest, as nothing is
   * known of a plugin that does not say.
   */
  effects?: PluginEffects;
  /** Entry module, relative to the package root. Default `index.js`. */
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

/** Writes task log entries (secret settings are scrubbed from them). */
export interface PluginLogger {
  log(level: LogLevel, message: string, exception?: string): void;
  trace(message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warning(message: string): void;
  error(message: string, exception?: string): void;
  critical(message: string, exception?: string): void;
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
  /**
   * Longest a database statement may run, in milliseconds
   * (`Plugins.Database.MaxStatementTimeoutMilliseconds`): a database plugin holds a task's own
   * statement timeout to it. Absent: the host sets no limit.
   */
  maxStatementTimeoutMilliseconds?: number;
}

export interface PluginNetworkFence {
  /** Refused whatever else says (`Plugins.Network.DenyCidrs`). */
  denyCidrs: readonly string[];
  /**
   * Trellis's own listening sockets (its API, Temporal, the Temporal SDK's metrics, and every
   * port its child processes listen on, the embedded Temporal's included): refused even inside
   * allowed ranges. `host` is an address range (`127.0.0.0/8`), an IP address or a name to
   * resolve; a socket on a wildcard or loopback address is listed once per range reaching this
   * machine.
   */
  trellisEndpoints: readonly { host: string; port: number }[];
  /** Reachable although inside `defaultDenyCidrs` (`Plugins.Network.AllowCidrs`). */
  allowCidrs: readonly string[];
  /** Refused unless allowed: unspecified, loopback, link-local, cloud metadata, multicast. */
  defaultDenyCidrs: readonly string[];
}

/** Where Trellis keeps its own data. */
export interface TrellisDatabaseAddress {
  /** The external database (`Database.Url`): host name or address, port and database name. */
  host?: string;
  port?: number;
  database?: string;
}

/** Which task run a plugin call belongs to. */
export interface PluginTask {
  name: string;
  executionId: string;
  attempt: number;
  /**
   * The attempt's key for receivers that deduplicate (`<executionId>:<task's id>:<attempt>`):
   * a worker that dies mid-attempt leaves it to be tried again with the same key, while each
   * retry the task's error handling makes is a new attempt with a new key. A plugin sends it with
   * what it does elsewhere (`Net/Http`'s `Idempotency-Key` header), since delivery is at least once.
   */
  idempotencyKey: string;
}

/**
 * The W3C trace context (https://www.w3.org/TR/trace-context/) of a plugin call, when the host
 * traces (Trellis's `Telemetry.OtlpEndpoint`). A plugin that calls other services sends it on as
 * the `traceparent` (and `tracestate`) request headers, so that their spans join the run's trace.
 */
export interface PluginTraceContext {
  /** `00-<trace id>-<span id of the plugin call>-<flags>`. */
  traceparent: string;
  tracestate?: string;
}

/** What the engine gives `execute` besides the parameters. */
export interface PluginContext<Specifications = Record<string, unknown>> {
  /** Resolved settings: defaults, then the configuration's, then the task's inline ones. */
  specifications: Readonly<Specifications>;
  logger: PluginLogger;
  /** Fires on cancel or timeout; a plugin stops promptly when it does. */
  signal: AbortSignal;
  /** Tells the engine the plugin is alive (long-running work should call it now and then). */
  heartbeat(details?: unknown): void;
  task: PluginTask;
  /** Settings of the Trellis installation; the runner sets them and a task cannot override them. */
  host: PluginHostSettings;
  /** The call's trace context; absent when the host does not trace. */
  trace?: PluginTraceContext;
}

/**
 * A plugin module's `execute`: the task's parameters (expressions resolved, checked against the
 * manifest's `parameters` schema, defaults filled in) and the context; returns JSON.
 *
 * A thrown error is a runtime failure the engine may retry per the task's error handling. Throw
 * a `NonRetryableError` (or any error with `nonRetryable: true`) when retrying cannot help.
 */
export type PluginExecute<
  Parameters = Record<string, unknown>,
  Specifications = Record<string, unknown>,
  Output = unknown,
> = (parameters: Parameters, context: PluginContext<Specifications>) => Promise<Output> | Output;

/** What a plugin's entry module exports. */
export interface PluginModule {
  execute: PluginExecute;
}

/** An error retrying cannot fix (bad input, a forbidden action): the task fails at once. */
export declare class NonRetryableError extends Error {
  readonly nonRetryable: true;
  constructor(message: string, options?: ErrorOptions);
}

/** A `NonRetryableError` with this message (and cause). */
export declare function nonRetryable(message: string, options?: ErrorOptions): NonRetryableError;

/** The host's network fence as a check on the addresses a plugin connects to. */
export interface NetworkFence {
  /**
   * Resolves `host` (a name or an address, IPv6 in brackets or not) once and returns the
   * addresses the fence allows for `port`; rejects with an error marked `fenced: true` that says
   * why when none is. Connect only to the returned addresses: a second lookup could answer
   * differently (DNS rebinding).
   */
  allowedAddresses(host: string, port: number): Promise<{ address: string; family: number }[]>;
  /**
   * Whether Unix sockets may be used: they reach this machine as loopback does, so only when
   * `Plugins.Network.AllowCidrs` allows loopback (127.0.0.1) and `DenyCidrs` does not refuse it.
   */
  allowsLocalSockets(): boolean;
}

/** The fence of `context.host.network`; throws a `NonRetryableError` when the host gives none. */
export declare function networkFence(fence: PluginNetworkFence | undefined): NetworkFence;
