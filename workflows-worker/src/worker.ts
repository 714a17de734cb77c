/**
 * The Trellis worker: polls the configured task queue, runs `trellisExecution` workflows and
 * their activities. Any number of workers may run against one Temporal and one PostgreSQL.
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Connection } from '@temporalio/client';
import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import {
  bundleWorkflowCode,
  NativeConnection,
  Runtime,
  Worker,
  type WorkerOptions,
  type WorkflowBundle,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import type { Kysely } from 'kysely';
import type { TrellisConfig } from '#platform/config/types.js';
import type { Database } from '#store/tables.js';
import type { Logger } from '#platform/logging.js';
import type { Metrics } from '#platform/observability/metrics.js';
import type { Tracing } from '#platform/observability/tracing.js';
import type { RuntimeReach } from '#plugin-host/reach.js';
import { createPluginRunner, type PluginRunner } from '#plugin-host/runner.js';
import { temporalConnectionOptions, trellisNamespaces } from '#platform/temporal/connection.js';
import { createActivities } from './activities/index.js';

/** Whether this module runs compiled (`dist/`, `npm run build`) rather than from TypeScript source. */
const compiled = import.meta.url.endsWith('.js');

/** The module whose exports are the workflows (its compiled form when this module is compiled). */
export const workflowsPath = fileURLToPath(
  new URL(`./workflows/index.${compiled ? 'js' : 'ts'}`, import.meta.url),
);

/** Where `npm run build` writes the workflow bundle: beside the compiled worker. */
export const prebuiltBundlePath = fileURLToPath(new URL('./workflow-bundle.js', import.meta.url));

/** The same with Temporal's OpenTelemetry workflow interceptors in it (tracing on). */
export const prebuiltTracedBundlePath = fileURLToPath(
  new URL('./workflow-bundle-traced.js', import.meta.url),
);

export interface WorkerDeps {
  config: TrellisConfig;
  db: Kysely<Database>;
  /**
   * A worker connection to reuse. A client `Connection` (or none) makes the worker open its own
   * `NativeConnection` to `Temporal.Address`, closed on stop.
   */
  connection?: NativeConnection | Connection;
  logger: Logger;
  /** How tasks call plugins; by default the plugins installed in `db`. */
  runner?: PluginRunner;
  /** Where this process listens and keeps its embedded database, which plugins must not reach. */
  reach?: RuntimeReach;
  /** Counts runs and attempts; with metrics on, also gets the Temporal SDK's worker metrics. */
  metrics?: Metrics;
  /** Tracing on: workflows and activities continue the trace their start carried. */
  tracing?: Tracing;
  /**
   * The namespace has the `TrellisStatus` search attribute (the composition root registers it, or
   * finds it): runs keep it current. Default false: upserting an attribute the namespace lacks
   * would fail every workflow task of the run.
   */
  statusAttribute?: boolean;
  /** The namespace has `TrellisProject`: the children runs start carry their project's name. */
  projectAttribute?: boolean;
  /** The namespace has `TrellisDryRun`: a dry run's children carry it. */
  dryRunAttribute?: boolean;
}

export interface RunningWorker {
  /** Whether the worker polls its task queue (it is running and not stopping). */
  isPolling(): boolean;
  /** Stops polling, lets running activities finish (up to a grace time), then closes. */
  stop(): Promise<void>;
}

let runtime: { metrics: boolean; metricsUrl: Promise<string | undefined> } | undefined;

/**
 * Routes the Temporal SDK's logs (and its native core's warnings) into our pino logger. Once per
 * process, before any worker or native connection exists; later calls do nothing. Signals are
 * left to the launcher, which stops workers through `stop()`.
 *
 * With `metrics`, the SDK's core also keeps its worker metrics (pollers, task slots, latencies,
 * `temporal_*`) in Prometheus' text format on a loopback port of its own; the returned URL is
 * where, for `/metrics` to append. The runtime is the process's: when it was installed before
 * without metrics, there are none (undefined).
 */
export function installTemporalRuntime(
  logger: Logger,
  options: { metrics?: boolean } = {},
): Promise<string | undefined> {
  const metrics = options.metrics === true;
  if (runtime) {
    if (metrics && !runtime.metrics) {
      logger.warn(
        'The Temporal runtime of this process was installed without metrics; /metrics shows no temporal_* series',
      );
    }
    return runtime.metricsUrl;
  }
  runtime = { metrics, metricsUrl: installRuntime(logger, metrics) };
  return runtime.metricsUrl;
}

async function installRuntime(logger: Logger, metrics: boolean): Promise<string | undefined> {
  const install = (prometheus?: { bindAddress: string }) =>
    Runtime.install({
      logger: temporalLogger(logger.child({ component: 'temporal' })),
      telemetryOptions: {
        logging: { forward: {}, filter: { core: 'WARN', other: 'ERROR' } },
        ...(prometheus && { metrics: { prometheus } }),
      },
      shutdownSignals: [],
    });
  try {
    if (!metrics) {
      install();
      return undefined;
    }
    // The core binds the port itself and cannot say which it got: take a free one (another
    // process could take it first, then the next try takes another).
    for (let attempt = 1; ; attempt++) {
      const bindAddress = `127.0.0.1:${await freeLoopbackPort()}`;
      try {
        install({ bindAddress });
        return `http://${bindAddress}/metrics`;
      } catch (error) {
        if (attempt === 3 || !/address already in use/i.test(String(error))) throw error;
      }
    }
  } catch (error) {
    // Someone created the runtime first (with the SDK's defaults): keep it.
    logger.debug({ err: error }, 'Temporal runtime already installed');
    return undefined;
  }
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The Temporal SDK's worker metrics (Prometheus text), from its core's loopback port. */
async function temporalMetrics(url: string): Promise<string> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.text();
}

const methods = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
} as const satisfies Record<LogLevel, string>;

function temporalLogger(logger: Logger): TemporalLogger {
  // The SDK logs every activity and workflow task at DEBUG: drop those below our level at once.
  const write = (level: LogLevel, message: string, meta?: LogMetadata) => {
    const method = methods[level];
    if (logger.isLevelEnabled(method)) logger[method](meta ?? {}, message);
  };
  return {
    log: write,
    trace: (message, meta) => write('TRACE', message, meta),
    debug: (message, meta) => write('DEBUG', message, meta),
    info: (message, meta) => write('INFO', message, meta),
    warn: (message, meta) => write('WARN', message, meta),
    error: (message, meta) => write('ERROR', message, meta),
  };
}

/**
 * Builds the workflow code bundle (webpack: seconds). `traced`: with Temporal's OpenTelemetry
 * workflow interceptors, which only add spans and headers (no commands: runs replay the same
 * with or without them, test/engine/histories.test.ts).
 */
export async function buildWorkflowBundle(
  logger?: Logger,
  options: { traced?: boolean } = {},
): Promise<WorkflowBundle> {
  const interceptors = options.traced
    ? [(await import('#platform/observability/temporal-tracing.js')).workflowTracingModule]
    : [];
  return bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: interceptors,
    ...(logger ? { logger: temporalLogger(logger.child({ component: 'workflow-bundler' })) } : {}),
  });
}

const bundles = new Map<boolean, Promise<WorkflowBundleOption>>();

/**
 * The workflow code the worker runs: compiled, the bundle `npm run build` made (a worker start
 * takes no webpack run); from source, a bundle built once per process. `traced` picks the one
 * with the tracing interceptors.
 */
export function workflowBundle(
  logger?: Logger,
  options: { traced?: boolean } = {},
): Promise<WorkflowBundleOption> {
  const traced = options.traced === true;
  let bundle = bundles.get(traced);
  if (!bundle) {
    const prebuilt = traced ? prebuiltTracedBundlePath : prebuiltBundlePath;
    bundle =
      compiled && existsSync(prebuilt)
        ? Promise.resolve({ codePath: prebuilt })
        : buildWorkflowBundle(logger, { traced });
    bundles.set(traced, bundle);
    bundle.catch(() => bundles.delete(traced));
  }
  return bundle;
}

/** Worker options that shape throughput and failover; the benchmark baseline uses the same. */
export const workerTuning = {
  // Plugins mostly wait on I/O: many attempts fit in one process.
  maxConcurrentActivityTaskExecutions: 200,
  maxConcurrentLocalActivityExecutions: 100,
  // Heartbeats reach the server at least every second, so a cancel reaches a plugin within
  // about a second (the server answers a heartbeat with the cancel).
  maxHeartbeatThrottleInterval: '1 second',
  defaultHeartbeatThrottleInterval: '1 second',
  // A dead worker's workflows move to another worker after this long.
  stickyQueueScheduleToStartTimeout: '5 seconds',
  shutdownGraceTime: '5 seconds',
  // A stop always ends: an attempt that ignores its cancel for this long is left to Temporal,
  // which runs it again on another worker once its timeout passes (a local one: with its run).
  shutdownForceTime: '30 seconds',
} as const satisfies Partial<WorkerOptions>;

/** Starts a worker on `Temporal.TaskQueue`; resolves once it polls. */
export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const { config, logger, metrics, tracing } = deps;
  const metricsUrl = await installTemporalRuntime(logger, { metrics: metrics?.enabled });
  if (metricsUrl) metrics?.addExposition(() => temporalMetrics(metricsUrl));
  let connection: NativeConnection;
  let ownConnection = false;
  if (deps.connection instanceof NativeConnection) {
    connection = deps.connection;
  } else {
    connection = await NativeConnection.connect(await temporalConnectionOptions(config.Temporal));
    ownConnection = true;
  }
  // A runner of its own is closed with the worker (it owns the plugin sandbox processes).
  const runner =
    deps.runner ??
    createPluginRunner({
      db: deps.db,
      config,
      logger,
      // The SDK core serves its metrics on a port of its own.
      reach: withEndpoint(deps.reach, metricsUrl),
    });
  const closeRunner = () => (deps.runner ? Promise.resolve() : runner.close());
  try {
    const traced =
      tracing &&
      (await import('#platform/observability/temporal-tracing.js')).tracingWorkerOptions(tracing);
    const bundle = await workflowBundle(logger, { traced: tracing !== undefined });
    const activities = createActivities({
      ...deps,
      runner,
      ...(tracing && { tracer: tracing.tracer }),
    });
    // One worker per namespace Trellis runs in (`Projects.Namespaces`), on the same task queue,
    // sharing the activities (and their plugin runner) and the workflow bundle.
    const namespaces = trellisNamespaces(config);
    const workers = await Promise.all(
      namespaces.map((namespace) =>
        Worker.create({
          connection,
          namespace,
          taskQueue: config.Temporal.TaskQueue,
          workflowBundle: bundle,
          activities,
          ...(traced && { interceptors: traced.interceptors, sinks: traced.sinks }),
          ...workerTuning,
        }),
      ),
    );
    const running = workers.map((worker) => {
      const run = worker.run();
      run.catch((error: unknown) =>
        logger.error({ err: error }, 'Temporal worker stopped with an error'),
      );
      return run;
    });
    logger.info({ taskQueue: config.Temporal.TaskQueue, namespaces }, 'worker polling');
    return {
      isPolling: () => workers.every((worker) => worker.getState() === 'RUNNING'),
      async stop() {
        for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
        await Promise.all(running.map((run) => run.catch(() => undefined)));
        await closeRunner();
        if (ownConnection) await connection.close();
      },
    };
  } catch (error) {
    await closeRunner();
    if (ownConnection) await connection.close();
    throw error;
  }
}

/** `reach` with the socket of `url` added, when there is one. */
function withEndpoint(reach: RuntimeReach | undefined, url: string | undefined): RuntimeReach {
  if (url === undefined) return reach ?? {};
  const { hostname, port } = new URL(url);
  return {
    ...reach,
    endpoints: [...(reach?.endpoints ?? []), { host: hostname, port: Number(port) }],
  };
}
