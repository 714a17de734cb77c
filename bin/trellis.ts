/**
 * The Trellis launcher: `npm start` (= `tsx bin/trellis.ts`). Under a process manager prefer
 * `node --import tsx bin/trellis.ts`: the `tsx` CLI wrapper SIGKILLs its script when a relayed
 * SIGTERM is not acknowledged within 30 ms, which skips the clean shutdown below.
 *
 *   trellis [--role all|api|worker]
 *
 * `all` (default) runs the API and a worker in one process. Without `Database.Url` it uses an
 * embedded PGlite, and without `Temporal.Address` it runs `temporal server start-dev` as a child,
 * both persisted under `DataDirectory`. `api` and `worker` are for deployments of many processes
 * and need both a PostgreSQL and a Temporal cluster. Ctrl-C / SIGTERM stops everything in reverse
 * order of start and exits 0.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Connection } from '@temporalio/client';
import { buildConfig, loadConfig } from '../core/src/config/load.js';
import type { TrellisConfig } from '../core/src/config/types.js';
import { openDatabase } from '../core/src/db/database.js';
import { migrateToLatest } from '../core/src/db/migrate.js';
import { createLogger, type Logger } from '../core/src/logging.js';
import { createCatalog } from '../core/src/plugins/catalog.js';
import { installBuiltIns } from '../core/src/plugins/installation.js';
import { findTemporalCli } from '../core/src/temporal/cli.js';
import { connectTemporal } from '../core/src/temporal/connection.js';
import { startDevServer } from '../core/src/temporal/dev-server.js';
import { reconcileSchedules } from '../core/src/temporal/schedules.js';
import { ensureSearchAttributes } from '../core/src/temporal/search-attributes.js';
import { ensureGeneratedAdmin, type GeneratedAdmin } from './admin-user.js';

type Role = 'all' | 'api' | 'worker';
const roles: readonly Role[] = ['all', 'api', 'worker'];

const usage = `Usage: trellis [--role all|api|worker]

  --role all     API and worker in one process (default); embedded PGlite and Temporal when
                 Database.Url / Temporal.Address are not configured
  --role api     only the HTTP API      (needs Database.Url and Temporal.Address)
  --role worker  only the Temporal worker (needs Database.Url and Temporal.Address)

Configuration: TRELLIS_CONFIG=<file> (default ./trellis.config.json), overrides as
TRELLIS__Section__Key=value, e.g. TRELLIS__Server__Port=7000.`;

/** What runs, stopped in reverse order of start. */
class Running {
  private readonly parts: { name: string; stop: () => Promise<void> }[] = [];
  constructor(private readonly logger: Logger) {}

  add(name: string, stop: () => Promise<void>): void {
    this.parts.push({ name, stop });
  }

  async stopAll(): Promise<boolean> {
    let clean = true;
    for (const part of this.parts.reverse().splice(0)) {
      try {
        await part.stop();
        this.logger.info(`stopped ${part.name}`);
      } catch (error) {
        clean = false;
        this.logger.error({ err: error }, `stopping ${part.name} failed`);
      }
    }
    return clean;
  }
}

class Interrupted extends Error {}

function parseRole(argv: string[]): Role | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: { role: { type: 'string', short: 'r' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help) return 'help';
  const role = (values.role ?? 'all').toLowerCase() as Role;
  if (!roles.includes(role)) throw new UsageError(`Unknown role "${values.role}".`);
  return role;
}

class UsageError extends Error {}

async function main(): Promise<void> {
  let role: Role | 'help';
  let config: TrellisConfig;
  try {
    role = parseRole(process.argv.slice(2));
    if (role === 'help') {
      console.log(usage);
      return;
    }
    config = loadConfig({ env: process.env, cwd: process.cwd() });
    checkRole(role, config);
  } catch (error) {
    console.error(`trellis: ${(error as Error).message}`);
    if (
      error instanceof UsageError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      console.error(usage);
    }
    process.exitCode = 2;
    return;
  }

  const logger = createLogger(config.Logging, { role });
  const running = new Running(logger);
  // A signal during start only sets `stopRequested`: the start stops at its next step and unwinds
  // what it started, so nothing is torn down under a step still using it.
  let stopRequested = false;
  let started = false;
  const shutDown = async () => process.exit((await running.stopAll()) ? 0 : 1);
  const stop = (signal: NodeJS.Signals) => {
    if (stopRequested) {
      logger.warn(`${signal} again: exiting without waiting`);
      process.exit(1);
    }
    stopRequested = true;
    logger.info(
      `${signal} received, stopping${started ? '' : ' once the current start step ends'}`,
    );
    if (started) void shutDown();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const checkpoint = () => {
    if (stopRequested) throw new Interrupted();
  };

  try {
    const banner = await start(role, config, logger, running, checkpoint);
    started = true;
    if (stopRequested) return await shutDown(); // the signal came after the last checkpoint
    process.stdout.write(banner);
  } catch (error) {
    if (!(error instanceof Interrupted)) {
      logger.fatal({ err: error }, `Trellis failed to start: ${(error as Error).message}`);
      await running.stopAll();
      process.exit(1);
    }
    await shutDown();
  }
}

/** Separate processes share nothing but PostgreSQL and Temporal: the embedded ones cannot do. */
function checkRole(role: Role, config: TrellisConfig): void {
  if (role === 'all') return;
  const missing = [
    config.Database.Url ? null : 'Database.Url (the embedded PGlite serves one process only)',
    config.Temporal.Address
      ? null
      : 'Temporal.Address (the embedded Temporal lives inside the `all` process)',
  ].filter((item) => item !== null);
  if (missing.length > 0) throw new UsageError(`--role ${role} needs ${missing.join(' and ')}.`);
}

async function start(
  role: Role,
  loaded: TrellisConfig,
  logger: Logger,
  running: Running,
  checkpoint: () => void,
): Promise<string> {
  const database = await openDatabase(loaded, logger);
  running.add('database', () => database.close());
  await migrateToLatest(database.db, logger);
  checkpoint();

  const catalog = createCatalog(loaded);
  if (role !== 'worker' && loaded.Plugins.InstallBuiltIns)
    await installBuiltIns(database.db, catalog, logger);
  checkpoint();

  let temporalAddress = loaded.Temporal.Address;
  let temporalUi: string | null = null;
  if (!temporalAddress) {
    const cli = await findTemporalCli({ logger, env: process.env });
    checkpoint();
    const devServer = await startDevServer({
      cliPath: cli.path,
      port: loaded.Temporal.Port,
      uiPort: loaded.Temporal.UiPort,
      dbFile: path.join(loaded.DataDirectory, 'temporal.db'),
      namespace: loaded.Temporal.Namespace,
      logger,
    });
    running.add('Temporal dev server', () => devServer.stop());
    temporalAddress = devServer.address;
    temporalUi = devServer.uiUrl;
    checkpoint();
  }

  const admin =
    role === 'all' && needsGeneratedAdmin(loaded)
      ? await ensureGeneratedAdmin(loaded.DataDirectory)
      : null;
  const config = withRuntimeSettings(loaded, temporalAddress, admin);

  const temporal = await connectTemporal(config.Temporal, logger);
  running.add('Temporal connection', () => temporal.connection.close());
  await registerSearchAttributes(
    temporal.connection,
    config,
    logger,
    loaded.Temporal.Address === undefined,
  );
  if (role !== 'worker') await reconcileSchedules(database.db, temporal.client, config, logger);
  checkpoint();

  let apiUrl: string | null = null;
  // Imported only by the role that runs them: an API process never loads the worker's native code.
  if (role !== 'worker') {
    // Repairs executions a killed API left without a run, now and every little while after.
    const { startExecutionRecovery } =
      await import('../server/src/executions/recover-executions.js');
    const recovery = startExecutionRecovery({
      db: database.db,
      client: temporal.client,
      config,
      logger,
    });
    running.add('execution recovery', () => recovery.stop());
    const { startApiServer } = await import('../server/src/app.js');
    const api = await startApiServer({
      config,
      db: database.db,
      logger,
      temporal: { client: temporal.client },
      catalog,
    });
    running.add('API', () => api.close());
    apiUrl = api.url;
    checkpoint();
  }
  if (role !== 'api') {
    const { startWorker } = await import('../workflows-worker/src/worker.js');
    const worker = await startWorker({
      config,
      db: database.db,
      connection: temporal.connection,
      logger,
    });
    running.add('worker', () => worker.stop());
    checkpoint();
  }

  return banner({ role, config, apiUrl, temporalUi, admin, embeddedDatabase: database.embedded });
}

/** With no way to log in configured, the `all` process makes an admin rather than ship a default. */
function needsGeneratedAdmin(config: TrellisConfig): boolean {
  return config.Security.Basic.Users.length === 0 && !config.Security.Bearer.Enabled;
}

/** The configuration as this process runs it: the embedded Temporal's address, the generated admin. */
function withRuntimeSettings(
  loaded: TrellisConfig,
  temporalAddress: string,
  admin: GeneratedAdmin | null,
): TrellisConfig {
  const copy = structuredClone(loaded) as TrellisConfig;
  copy.Temporal.Address = temporalAddress;
  if (admin) copy.Security.Basic = { Enabled: true, Users: [admin.user] };
  return buildConfig(copy);
}

/**
 * The dev server registers the attributes itself; a real cluster may refuse the operator call, in
 * which case runs still work once an operator registers them (see search-attributes.ts).
 */
async function registerSearchAttributes(
  connection: Connection,
  config: TrellisConfig,
  logger: Logger,
  embedded: boolean,
): Promise<void> {
  try {
    const added = await ensureSearchAttributes(connection, config.Temporal.Namespace);
    if (added.length > 0) logger.info({ added }, 'registered Temporal search attributes');
  } catch (error) {
    if (embedded) throw error;
    logger.error(
      { err: error },
      'Could not register the search attributes TrellisWorkflowId, TrellisWorkflowName, TrellisExecutionId ' +
        `(Keyword) in namespace ${config.Temporal.Namespace}; register them with ` +
        '`temporal operator search-attribute create`, or runs cannot start',
    );
  }
}

function banner(options: {
  role: Role;
  config: TrellisConfig;
  apiUrl: string | null;
  temporalUi: string | null;
  admin: GeneratedAdmin | null;
  embeddedDatabase: boolean;
}): string {
  const { role, config, apiUrl, temporalUi, admin } = options;
  const version = (
    JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    }
  ).version;
  const { Namespace, TaskQueue, Address } = config.Temporal;
  const lines = [
    '',
    `Trellis ${version} is running (role ${role})`,
    ...(apiUrl ? [`  API          ${apiUrl}`, `  API docs     ${apiUrl}/docs`] : []),
    temporalUi
      ? `  Temporal UI  ${temporalUi}/namespaces/${Namespace}/workflows`
      : `  Temporal     ${Address} (namespace ${Namespace})`,
    ...(role !== 'api' ? [`  Worker       polling task queue "${TaskQueue}"`] : []),
    `  Database     ${options.embeddedDatabase ? `embedded PGlite in ${path.join(config.DataDirectory, 'pglite')}` : 'PostgreSQL (Database.Url)'}`,
  ];
  if (apiUrl) lines.push(...loginLines(config, apiUrl, admin));
  lines.push('Press Ctrl-C to stop.', '');
  return lines.join('\n') + '\n';
}

function loginLines(config: TrellisConfig, apiUrl: string, admin: GeneratedAdmin | null): string[] {
  if (admin?.password) {
    return [
      `  Log in       user "admin", password "${admin.password}"`,
      `               (shown only now; kept hashed in ${admin.file}; delete that file for a new one)`,
      `  Try          curl -u 'admin:${admin.password}' ${apiUrl}/workflows`,
    ];
  }
  if (admin) {
    return [
      `  Log in       user "admin" with the password printed at the first start`,
      `               (forgot it? stop, delete ${admin.file}, start again)`,
      `  Try          curl -u 'admin:<password>' ${apiUrl}/workflows`,
    ];
  }
  const { Basic, Bearer } = config.Security;
  return [
    ...(Basic.Enabled && Basic.Users.length > 0
      ? [
          `  Log in       a user of Security.Basic.Users: curl -u '<name>:<password>' ${apiUrl}/workflows`,
        ]
      : []),
    ...(Bearer.Enabled
      ? [`  Bearer       curl -H 'Authorization: Bearer <token>' ${apiUrl}/workflows`]
      : []),
  ];
}

await main();
