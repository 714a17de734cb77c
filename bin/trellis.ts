/**
 * The Trellis launcher. `npm start` runs its compiled form (`dist/bin/trellis.js`, built by
 * `npm run build`, or by `npm start` itself when dist/ is stale); under a process manager run
 * `node dist/bin/trellis.js` directly. It builds the process through the composition root
 * (`trellis-process.ts`) and adds what only a person at a terminal needs: arguments, the
 * generated admin, the banner and signals.
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
import { buildConfig, loadConfig } from '#platform/config/load.js';
import type { TrellisConfig } from '#platform/config/types.js';
import { installPath } from '#platform/install-root.js';
import { createLogger } from '#platform/logging.js';
import { generatedAdmin, keepGeneratedAdmin, type GeneratedAdmin } from './admin-user.js';
import {
  checkRole,
  createTrellis,
  processRoles,
  StartAborted,
  type ProcessRole,
  type RunningTrellis,
} from './trellis-process.js';

const usage = `Usage: trellis [--role all|api|worker]

  --role all     API and worker in one process (default); embedded PGlite and Temporal when
                 Database.Url / Temporal.Address are not configured
  --role api     only the HTTP API      (needs Database.Url and Temporal.Address)
  --role worker  only the Temporal worker (needs Database.Url and Temporal.Address)

Configuration: TRELLIS_CONFIG=<file> (default ./trellis.config.json), overrides as
TRELLIS__Section__Key=value, e.g. TRELLIS__Server__Port=7000.`;

class UsageError extends Error {}

function parseRole(argv: string[]): ProcessRole | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: { role: { type: 'string', short: 'r' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help) return 'help';
  const role = (values.role ?? 'all').toLowerCase() as ProcessRole;
  if (!processRoles.includes(role)) throw new UsageError(`Unknown role "${values.role}".`);
  return role;
}

async function main(): Promise<void> {
  let role: ProcessRole | 'help';
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
      (error as Error).name === 'RoleConfigurationError' ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      console.error(usage);
    }
    process.exitCode = 2;
    return;
  }

  const logger = createLogger(config.Logging, { role });
  // With no way to log in configured, the `all` process makes an admin rather than ship a default.
  const admin =
    role === 'all' && needsGeneratedAdmin(config)
      ? await generatedAdmin(config.DataDirectory)
      : null;
  const trellis = createTrellis(admin ? withAdmin(config, admin) : config, { role, logger });
  // A signal during start aborts it at its next step; `stop()` then unwinds what it started, so
  // nothing is torn down under a step still using it.
  const aborter = new AbortController();
  let started = false;
  const shutDown = async () => {
    try {
      await trellis.stop();
      process.exit(0);
    } catch {
      process.exit(1);
    }
  };
  const stop = (signal: NodeJS.Signals) => {
    if (aborter.signal.aborted) {
      logger.warn(`${signal} again: exiting without waiting`);
      process.exit(1);
    }
    aborter.abort();
    logger.info(
      `${signal} received, stopping${started ? '' : ' once the current start step ends'}`,
    );
    if (started) void shutDown();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);

  try {
    const running = await trellis.start(aborter.signal);
    started = true;
    if (aborter.signal.aborted) return await shutDown(); // the signal came after the last step
    if (admin?.password) await keepGeneratedAdmin(admin);
    process.stdout.write(banner(running, admin));
  } catch (error) {
    if (!(error instanceof StartAborted)) {
      logger.fatal({ err: error }, `Trellis failed to start: ${(error as Error).message}`);
      await trellis.stop().catch(() => undefined);
      process.exit(1);
    }
    await shutDown();
  }
}

function needsGeneratedAdmin(config: TrellisConfig): boolean {
  return config.Security.Basic.Users.length === 0 && !config.Security.Bearer.Enabled;
}

function withAdmin(config: TrellisConfig, admin: GeneratedAdmin): TrellisConfig {
  const copy = structuredClone<TrellisConfig>(config);
  copy.Security.Basic = { Enabled: true, Users: [admin.user] };
  return buildConfig(copy);
}

function banner(running: RunningTrellis, admin: GeneratedAdmin | null): string {
  const { role, config, apiUrl, temporalUi } = running;
  const version = (
    JSON.parse(readFileSync(installPath('package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
  const { Namespace, TaskQueue, Address } = config.Temporal;
  const lines = [
    '',
    `Trellis ${version} is running (role ${role})`,
    ...(apiUrl
      ? [
          `  Console      ${apiUrl}/ui/`,
          `  API          ${apiUrl}`,
          `  API docs     ${apiUrl}/docs`,
        ]
      : []),
    temporalUi
      ? `  Temporal UI  ${temporalUi}/namespaces/${Namespace}/workflows`
      : `  Temporal     ${Address} (namespace ${Namespace})`,
    ...(role !== 'api' ? [`  Worker       polling task queue "${TaskQueue}"`] : []),
    ...(running.probesUrl
      ? [
          `  Probes       ${running.probesUrl}/livez, /readyz${config.Metrics.Enabled ? ', /metrics' : ''}`,
        ]
      : []),
    `  Database     ${running.embeddedDatabase ? `embedded PGlite in ${path.join(config.DataDirectory, 'pglite')}` : 'PostgreSQL (Database.Url)'}`,
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
