import { sql } from 'kysely';
import type { components } from '../../../generated/schema.js';
import type { AppDeps } from '../handler.js';

type HealthCheck = components['schemas']['HealthCheck'];
type HealthReport = components['schemas']['HealthReport'];

const CHECK_TIMEOUT_MS = 5_000;

/** `hh:mm:ss.fffffff` (a .NET TimeSpan, 100 ns ticks) from nanoseconds. */
export function formatDuration(nanoseconds: bigint): string {
  const ticks = nanoseconds / 100n;
  const totalSeconds = ticks / 10_000_000n;
  const fraction = (ticks % 10_000_000n).toString().padStart(7, '0');
  const two = (value: bigint) => value.toString().padStart(2, '0');
  return `${two(totalSeconds / 3600n)}:${two((totalSeconds / 60n) % 60n)}:${two(totalSeconds % 60n)}.${fraction}`;
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)),
      CHECK_TIMEOUT_MS,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function check(component: string, probe: () => Promise<string>): Promise<HealthCheck> {
  try {
    return {
      Component: component,
      Status: 'Healthy',
      Description: await withTimeout(probe(), component),
    };
  } catch (error) {
    return {
      Component: component,
      Status: 'Unhealthy',
      Description: error instanceof Error ? error.message : String(error),
    };
  }
}

/**
 * Checks every component the service depends on, concurrently: the configuration, the plugins
 * service (installed plugins readable), the logger, the database and, when connected, Temporal.
 */
export async function checkHealth(deps: AppDeps): Promise<HealthReport> {
  const started = process.hrtime.bigint();
  const checks = await Promise.all([
    check('Configuration', async () =>
      Object.isFrozen(deps.config)
        ? 'Configuration loaded and validated.'
        : 'Configuration loaded.',
    ),
    check('Plugins', async () => {
      const [installed, builtIns] = await Promise.all([
        deps.db
          .selectFrom('plugin')
          .select(({ fn }) => fn.countAll<string>().as('count'))
          .executeTakeFirstOrThrow(),
        deps.catalog.builtIns(),
      ]);
      return `${installed.count} plugins installed; ${builtIns.length} built-in packages available.`;
    }),
    check('Logger', async () => `Logging at level "${deps.logger.level}".`),
    check('Database', async () => {
      await sql`select 1`.execute(deps.db);
      return 'The database answers.';
    }),
    check('Temporal', async () => {
      await deps.temporal.client.workflowService.getSystemInfo({});
      return `Temporal answers (namespace "${deps.config.Temporal.Namespace}").`;
    }),
  ]);
  return {
    Status: checks.every((entry) => entry.Status === 'Healthy') ? 'Healthy' : 'Unhealthy',
    HealthChecks: checks,
    HealthCheckDuration: formatDuration(process.hrtime.bigint() - started),
  };
}
