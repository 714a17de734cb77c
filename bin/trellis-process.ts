/**
 * The composition root: the one place that builds a Trellis process from a frozen config and a
 * role. The launcher (`bin/trellis.ts`), the integration-test harness and the benchmarks all start
 * Trellis through `createTrellis`, so a test runs exactly the start-up production runs: database
 * and migrations, built-in plugins, Temporal (embedded dev server when no address is configured),
 * search attributes, schedule reconciliation, execution recovery, the API and the worker.
 *
 *   const trellis = createTrellis(config, { role: 'all', logger });
 *   const running = await trellis.start();   // what runs, and where
 *   await trellis.stop();                    // everything, in reverse order of start
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Connection } from '@temporalio/client';
import type { Kysely } from 'kysely';
import { buildConfig } from '#platform/config/load.js';
import type { TrellisConfig } from '#platform/config/types.js';
import { countWaitingApprovals } from '#store/approval-repository.js';
import * as projectRepository from '#store/project-repository.js';
import { describeUrl, isConnectionError, openDatabase, pingDatabase } from '#store/database.js';
import { Unavailable } from '#definition/errors.js';
import { migrateToLatest } from '#store/migrate.js';
import type { Database } from '#store/tables.js';
import { trellisVersion } from '#platform/install-root.js';
import type { Logger } from '#platform/logging.js';
import { createExecutionLog } from '#platform/observability/execution-log.js';
import { createMetrics, noMetrics } from '#platform/observability/metrics.js';
import { startProbeServer } from '#platform/observability/probe-server.js';
import { createReadiness } from '#platform/observability/readiness.js';
import { startTracing } from '#platform/observability/tracing.js';
import { createCatalog } from '#plugin-host/catalog.js';
import { installBuiltIns } from '#plugin-host/installation.js';
import { removeStaleStaging } from '#plugin-host/package.js';
import { findTemporalCli } from '#platform/temporal/cli.js';
import {
  connectTemporal,
  trellisNamespaces,
  type TemporalClient,
  type TemporalConnection,
} from '#platform/temporal/connection.js';
import { startDevServer } from '#platform/temporal/dev-server.js';
import { isPortTaken } from '#platform/http/listen.js';
import { waitUntilReachable, type WaitOptions } from '#platform/startup.js';
import { reconcileSchedules } from '#application/triggers/schedules.js';
import {
  ensureSearchAttributes,
  optionalSearchAttributes,
  TrellisDryRun,
  registeredSearchAttributes,
} from '#protocol/search-attributes.js';

export type ProcessRole = 'all' | 'api' | 'worker';
export const processRoles: readonly ProcessRole[] = ['all', 'api', 'worker'];

export interface TrellisProcessOptions {
  role: ProcessRole;
  logger: Logger;
  /**
   * A Temporal connection to use instead of connecting to `Temporal.Address`. Tests pass one
   * that cannot reach anything to see how the API answers while Temporal is down; it is closed
   * on stop like an own connection.
   */
  temporal?: TemporalConnection;
}

/** What a started process runs; `apiUrl` is null without an API, `temporalUi` without a dev server. */
export interface RunningTrellis {
  role: ProcessRole;
  /** The configuration as the process runs it (the embedded Temporal's address filled in). */
  config: TrellisConfig;
  db: Kysely<Database>;
  temporal: TemporalConnection;
  apiUrl: string | null;
  /**
   * A worker-only process's `/livez`, `/readyz` and `/metrics` (`Metrics.Host:WorkerPort`); null
   * in a process with an API, which serves them itself.
   */
  probesUrl: string | null;
  temporalUi: string | null;
  embeddedDatabase: boolean;
}

export interface TrellisProcess {
  /**
   * Starts every part the role needs, in order. When `signal` aborts during the start, the start
   * stops at its next step and rejects with `StartAborted`; `stop()` then unwinds what started.
   * A failed start leaves what it started running for `stop()` too.
   */
  start(signal?: AbortSignal): Promise<RunningTrellis>;
  /** Stops what runs in reverse order of start; rejects naming the parts that failed to stop. */
  stop(): Promise<void>;
}

/** The start was interrupted (a signal arrived while it ran). */
export class StartAborted extends Error {
  constructor() {
    super('Trellis start was interrupted');
    this.name = 'StartAborted';
  }
}

/** A role and a configuration that cannot run together; says what is missing. */
export class RoleConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RoleConfigurationError';
  }
}

/**
 * Separate processes share nothing but PostgreSQL and Temporal, which the embedded ones cannot
 * be: `api` and `worker` need both configured.
 */
export function checkRole(role: ProcessRole, config: TrellisConfig): void {
  if (role === 'all') return;
  const missing = [
    config.Database.Url ? null : 'Database.Url (the embedded PGlite serves one process only)',
    config.Temporal.Address
      ? null
      : 'Temporal.Address (the embedded Temporal lives inside the `all` process)',
  ].filter((item) => item !== null);
  if (missing.length > 0) {
    throw new RoleConfigurationError(`--role ${role} needs ${missing.join(' and ')}.`);
  }
}

/**
 * Refuses to start, before anything is created, when a port the configuration names is taken,
 * saying which setting to change (rather than a bind error from deep inside one part).
 */
async function assertPortsFree(
  role: ProcessRole,
  config: TrellisConfig,
  temporalGiven: boolean,
): Promise<void> {
  const embeddedTemporal = !config.Temporal.Address && !temporalGiven;
  const wanted = [
    ...(role !== 'worker'
      ? [{ setting: 'Server.Port', host: config.Server.Host, port: config.Server.Port }]
      : []),
    ...(embeddedTemporal
      ? [
          { setting: 'Temporal.Port', host: '127.0.0.1', port: config.Temporal.Port },
          { setting: 'Temporal.UiPort', host: '127.0.0.1', port: config.Temporal.UiPort },
        ]
      : []),
  ].filter(({ port }) => port > 0);
  for (const { setting, host, port } of wanted) {
    if (await isPortTaken(host, port)) {
      const [section, name] = setting.split('.');
      throw new Error(
        `port ${port} (${setting}) is taken by another program on ${host}: stop that program, ` +
          `or set ${setting} to a free port (TRELLIS__${section}__${name}=<port>; 0 picks any free one).`,
      );
    }
  }
}

/**
 * Builds (does not start) a Trellis process. Any role runs on the embedded database and Temporal
 * in one process; the launcher refuses `api`/`worker` without external ones (`checkRole`), since
 * several processes cannot share them.
 */
export function createTrellis(
  config: TrellisConfig,
  options: TrellisProcessOptions,
): TrellisProcess {
  const { role, logger } = options;
  const parts: { name: string; stop: () => Promise<void> }[] = [];
  const started = (name: string, stop: () => Promise<void>) => parts.push({ name, stop });

  async function start(signal?: AbortSignal): Promise<RunningTrellis> {
    const checkpoint = () => {
      if (signal?.aborted) throw new StartAborted();
    };
    checkpoint();
    await assertPortsFree(role, config, options.temporal !== undefined);
    // First in, last out: spans of everything that stops before it are still exported.
    const tracing = startTracing(config.Telemetry, { role, version: trellisVersion, logger });
    if (tracing) started('tracing', () => tracing.shutdown());
    /** Waits for what another process serves; an interrupted wait is an interrupted start. */
    const reach = <T>(
      attempt: () => Promise<T>,
      wait: Omit<WaitOptions, 'logger' | 'signal' | 'waitSeconds'>,
    ) =>
      waitUntilReachable(attempt, {
        ...wait,
        logger,
        signal,
        waitSeconds: config.Startup.WaitSeconds,
      }).catch((error: unknown) => {
        if (signal?.aborted) throw new StartAborted();
        throw error;
      });

    async function startEmbeddedTemporal() {
      logger.info(
        'starting the embedded Temporal dev server (set Temporal.Address to use a cluster)',
      );
      const cli = await findTemporalCli({ logger, env: process.env });
      checkpoint();
      return startDevServer({
        cliPath: cli.path,
        // 0: any free port, as for Server.Port.
        port: config.Temporal.Port || undefined,
        uiPort: config.Temporal.UiPort || undefined,
        dbFile: path.join(config.DataDirectory, 'temporal.db'),
        namespace: config.Temporal.Namespace,
        otherNamespaces: trellisNamespaces(config),
        logger,
      });
    }

    // The embedded Temporal dev server is a process of its own: it starts while the database
    // opens, migrates and installs the built-in plugins, which saves a start the time of the
    // shorter of the two. Stopped after everything that uses it (registered first).
    const embeddedTemporal =
      !config.Temporal.Address && !options.temporal ? startEmbeddedTemporal() : undefined;
    if (embeddedTemporal) {
      // Awaited below; a failure before then is reported there, not as an unhandled rejection.
      embeddedTemporal.catch(() => {});
      started('Temporal dev server', async () => {
        const devServer = await embeddedTemporal.catch(() => undefined);
        await devServer?.stop();
      });
    }

    const databaseUrl = config.Database.Url;
    logger.info(
      databaseUrl
        ? `connecting to PostgreSQL at ${describeUrl(databaseUrl)}`
        : existsSync(path.join(config.DataDirectory, 'pglite', 'PG_VERSION'))
          ? `opening the embedded database in ${path.join(config.DataDirectory, 'pglite')}`
          : `creating the embedded database in ${path.join(config.DataDirectory, 'pglite')} ` +
            '(first start only; this takes a while)',
    );
    const database = databaseUrl
      ? await reach(() => openDatabase(config, logger), {
          what: `PostgreSQL at ${describeUrl(databaseUrl)}`,
          retryable: isConnectionError,
          advice:
            'Check Database.Url (host, port, user, password), that PostgreSQL runs and accepts ' +
            'connections from this host, or raise Startup.WaitSeconds.',
        })
      : await openDatabase(config, logger);
    started('database', () => database.close());
    await migrateToLatest(database.db, logger);
    const metrics = config.Metrics.Enabled
      ? createMetrics({
          waitingApprovals: () => countWaitingApprovals(database.db),
          projectName: (id) => projectRepository.nameOf(database.db, id),
          logger,
        })
      : noMetrics;
    const executionLog = createExecutionLog(logger, metrics);
    checkpoint();

    const catalog = createCatalog(config);
    if (role !== 'worker' && config.Plugins.InstallBuiltIns) {
      await installBuiltIns(database.db, catalog, logger);
    }
    checkpoint();

    let temporalAddress = config.Temporal.Address;
    let temporalUi: string | null = null;
    // Trellis's own sockets, which plugins must not reach.
    const endpoints: { host: string; port: number }[] = [];
    if (embeddedTemporal) {
      const devServer = await embeddedTemporal;
      temporalAddress = devServer.address;
      temporalUi = devServer.uiUrl;
      endpoints.push(...devServer.endpoints);
      checkpoint();
    }
    const runtime =
      temporalAddress === config.Temporal.Address
        ? config
        : withEmbeddedTemporal(config, temporalAddress, temporalUi);

    const temporal =
      options.temporal ??
      (await reach(
        async () =>
          connectTemporal(
            runtime.Temporal,
            logger,
            tracing &&
              (
                await import('#platform/observability/temporal-tracing.js')
              ).tracingClientInterceptors(tracing),
          ),
        {
          what: `Temporal at ${temporalAddress}`,
          retryable: (error) => error instanceof Unavailable,
          advice:
            'Check Temporal.Address, that the Temporal frontend runs and is reachable from this ' +
            'host (with Temporal.Tls / Temporal.ApiKey if the cluster needs them), or raise ' +
            'Startup.WaitSeconds.',
        },
      ));
    started('Temporal connection', () => temporal.connection.close());
    const readiness = createReadiness({
      pingDatabase: () => pingDatabase(database.db),
      temporal: temporal.client,
      withWorker: role !== 'api',
    });
    let probesUrl: string | null = null;
    if (role === 'worker') {
      // No API port here: the probes (and metrics) get a port of their own, as early as can be.
      const probes = await startProbeServer({
        host: runtime.Metrics.Host,
        port: runtime.Metrics.WorkerPort,
        metrics,
        readiness,
        logger,
      });
      started('probes', () => probes.close());
      probesUrl = probes.url;
      endpoints.push({ host: runtime.Metrics.Host, port: Number(new URL(probes.url).port) });
    }
    const searchAttributes = await registerSearchAttributes(
      temporal.connection,
      runtime,
      logger,
      temporalUi !== null,
    );
    temporal.projectAttribute = searchAttributes.project;
    temporal.statusAttribute = searchAttributes.status;
    temporal.dryRunAttribute = searchAttributes.dryRun;
    if (role !== 'worker') await reconcile(database.db, temporal, runtime, logger);
    checkpoint();

    let apiUrl: string | null = null;
    // Imported only by the roles that run them: an API process never loads the worker's native code.
    if (role !== 'worker') {
      // Repairs executions a killed API left without a run, now and every little while after.
      const { startExecutionRecovery } =
        await import('#application/executions/recover-executions.js');
      const recovery = startExecutionRecovery({
        db: database.db,
        ...temporal,
        config: runtime,
        logger,
        executionLog,
      });
      started('execution recovery', () => recovery.stop());
      const { startApiServer } = await import('../server/src/app.js');
      const { createExecutionEventHub } = await import('../server/src/executions/event-hub.js');
      const { createEventStreamSlots } = await import('../server/src/executions/stream-slots.js');
      const { createInstalledPlugins } = await import('../server/src/plugins/installed-plugins.js');
      const api = await startApiServer({
        config: runtime,
        db: database.db,
        logger,
        temporal,
        catalog,
        executionEvents: createExecutionEventHub(database.listen, logger),
        eventStreams: createEventStreamSlots(runtime.Server.Events),
        installedPlugins: createInstalledPlugins(database.db, database.listen, logger),
        metrics,
        readiness,
        ...(tracing && { tracing }),
      });
      started('API', () => api.close());
      apiUrl = api.url;
      // Server.Host rather than the URL's: an API on 0.0.0.0 listens on every address.
      endpoints.push({ host: runtime.Server.Host, port: Number(new URL(api.url).port) });
      checkpoint();
    }
    if (role !== 'api') {
      // The worker unpacks plugin packages: a worker killed while unpacking left a staging folder.
      const stale = await removeStaleStaging(runtime.Plugins.CacheDirectory);
      if (stale.length > 0) {
        logger.info({ folders: stale }, 'removed plugin staging folders left by stopped processes');
      }
      logger.info('starting the worker: loading the workflow code and the plugins');
      const { startWorker } = await import('../workflows-worker/src/worker.js');
      const worker = await startWorker({
        config: runtime,
        db: database.db,
        connection: temporal.connection,
        logger,
        reach: { endpoints },
        metrics,
        statusAttribute: searchAttributes.status,
        projectAttribute: searchAttributes.project,
        dryRunAttribute: searchAttributes.dryRun,
        ...(tracing && { tracing }),
      });
      started('worker', () => worker.stop());
      readiness.watchWorker(() => worker.isPolling());
      checkpoint();
    }

    return {
      role,
      config: runtime,
      db: database.db,
      temporal,
      apiUrl,
      probesUrl,
      temporalUi,
      embeddedDatabase: database.embedded,
    };
  }

  async function stop(): Promise<void> {
    const failed: string[] = [];
    for (const part of parts.reverse().splice(0)) {
      // A part that takes long to stop says so while it does: whoever waits knows what for.
      const slow = setInterval(
        () => logger.warn(`still stopping ${part.name} (waiting for it to finish what it runs)`),
        10_000,
      );
      try {
        await part.stop();
        logger.info(`stopped ${part.name}`);
      } catch (error) {
        failed.push(part.name);
        logger.error({ err: error }, `stopping ${part.name} failed`);
      } finally {
        clearInterval(slow);
      }
    }
    if (failed.length > 0) throw new Error(`Stopping ${failed.join(', ')} failed (see the log).`);
  }

  return { start, stop };
}

/** The configuration with the embedded dev server's address, and its UI unless one is configured. */
function withEmbeddedTemporal(
  config: TrellisConfig,
  address: string | undefined,
  ui: string | null,
): TrellisConfig {
  const copy = structuredClone<TrellisConfig>(config);
  copy.Temporal.Address = address;
  if (ui !== null && copy.Temporal.UiUrl === undefined) copy.Temporal.UiUrl = ui;
  return buildConfig(copy);
}

/**
 * The dev server registers the attributes itself; a real cluster may refuse the operator call, in
 * which case runs still work once an operator registers them (see search-attributes.ts). Says
 * which optional attributes are there: runs carry `TrellisStatus` and `TrellisProject` only then
 * (a run started with, or upserting, an attribute the namespace lacks would fail).
 */
async function registerSearchAttributes(
  connection: Connection,
  config: TrellisConfig,
  logger: Logger,
  embedded: boolean,
): Promise<{ status: boolean; project: boolean; dryRun: boolean }> {
  const found = await Promise.all(
    trellisNamespaces(config).map((namespace) =>
      registerIn(connection, namespace, logger, embedded),
    ),
  );
  return {
    status: found.every((namespace) => namespace.status),
    project: found.every((namespace) => namespace.project),
    dryRun: found.every((namespace) => namespace.dryRun),
  };
}

async function registerIn(
  connection: Connection,
  namespace: string,
  logger: Logger,
  embedded: boolean,
): Promise<{ status: boolean; project: boolean; dryRun: boolean }> {
  try {
    const added = await ensureSearchAttributes(connection, namespace);
    if (added.length > 0) logger.info({ added }, 'registered Temporal search attributes');
    return { status: true, project: true, dryRun: true };
  } catch (error) {
    if (embedded) throw error;
    const registered = await registeredSearchAttributes(connection, namespace).catch(
      () => undefined,
    );
    const missing = (names: string[]) =>
      registered ? names.filter((name) => !registered.has(name)) : names;
    const required = missing(['TrellisWorkflowId', 'TrellisWorkflowName', 'TrellisExecutionId']);
    if (required.length > 0) {
      logger.error(
        { err: error, namespace, missing: required },
        `Could not register the search attributes ${required.join(', ')} (Keyword) in namespace ` +
          `${namespace}; register them with \`temporal operator search-attribute create\`, or runs cannot start`,
      );
    }
    const optional = missing(optionalSearchAttributes.map((key) => key.name));
    if (optional.length > 0) {
      logger.warn(
        { err: error, namespace, missing: optional },
        `The search attributes ${optional.join(', ')} are not registered in namespace ${namespace} ` +
          'and Trellis may not register them: runs go on without them (no filter on them in the ' +
          `Temporal UI). Create them with \`temporal operator search-attribute create --namespace ` +
          `${namespace} ${optional.map((name) => `--name ${name} --type ${name === TrellisDryRun.name ? 'Bool' : 'Keyword'}`).join(' ')}\` ` +
          'and restart the Trellis processes.',
      );
    }
    return {
      status: !optional.includes('TrellisStatus'),
      project: !optional.includes('TrellisProject'),
      dryRun: !optional.includes(TrellisDryRun.name),
    };
  }
}

/**
 * Brings Temporal's schedules in line with the triggers. A failure here (Temporal answering
 * slowly at start) is logged, not fatal: the API still serves, and saving a trigger syncs its
 * schedule again.
 */
async function reconcile(
  db: Kysely<Database>,
  temporal: TemporalClient,
  config: TrellisConfig,
  logger: Logger,
): Promise<void> {
  try {
    await reconcileSchedules(db, temporal, config, logger);
  } catch (error) {
    logger.error(
      { err: error },
      'Could not reconcile Temporal schedules with the triggers; the next start tries again',
    );
  }
}
