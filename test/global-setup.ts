/**
 * Integration-test services, started once per `vitest run`: a real PostgreSQL (`ensurePostgres`)
 * and one headless, in-memory Temporal dev server. Tests read them through
 * `test/support/services.ts`; they share the servers but never a database or a task queue.
 */
import type { TestProject } from 'vitest/node';
import { createLogger } from '#platform/logging.js';
import { findTemporalCli } from '#platform/temporal/cli.js';
import { startDevServer, type DevServer } from '#platform/temporal/dev-server.js';
import { ensurePostgres } from './support/postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the test PostgreSQL; tests create their own databases through it. */
    pgAdminUrl: string;
    /** `host:port` of the shared Temporal dev server (namespace `default`). */
    temporalAddress: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const logger = createLogger({ Level: 'info' }, { component: 'test-setup' });
  const postgres = ensurePostgres();
  const temporal = startTemporal(logger);
  const [pg, devServer] = await Promise.allSettled([postgres, temporal]);
  if (pg.status === 'rejected' || devServer.status === 'rejected') {
    // Never leave the one that did start running behind a failed setup.
    if (devServer.status === 'fulfilled') await devServer.value.stop();
    if (pg.status === 'fulfilled') await pg.value.stop?.();
    throw pg.status === 'rejected' ? pg.reason : (devServer as PromiseRejectedResult).reason;
  }
  project.provide('pgAdminUrl', pg.value.adminUrl);
  project.provide('temporalAddress', devServer.value.address);
  return async () => {
    await devServer.value.stop();
    await pg.value.stop?.();
  };
}

async function startTemporal(logger: ReturnType<typeof createLogger>): Promise<DevServer> {
  const cli = await findTemporalCli({ logger, env: process.env });
  return startDevServer({ cliPath: cli.path, namespace: 'default', logger, headless: true });
}
