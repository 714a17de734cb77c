/**
 * PostgreSQL and Temporal that belong to one caller, for what must not touch the servers the
 * integration tests share: restarting them mid-run (fault tests), or measuring on a quiet
 * server (benchmarks).
 */
import path from 'node:path';
import { findTemporalCli } from '#platform/temporal/cli.js';
import { freePort, startDevServer, type DevServer } from '#platform/temporal/dev-server.js';
import type { Logger } from '#platform/logging.js';
import { ensurePostgres, type TestPostgres } from '../../support/postgres.js';

export interface PrivatePostgres {
  adminUrl: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** A throwaway PostgreSQL cluster of our own (never `TRELLIS_TEST_DATABASE_URL`): restartable. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const server: TestPostgres = await ensurePostgres({});
  const { restart, stop } = server;
  if (!restart || !stop) throw new Error('ensurePostgres did not start a cluster of its own');
  return { adminUrl: server.adminUrl, restart, stop };
}

export interface PrivateTemporal {
  /** `host:port`; the same across restarts. */
  address: string;
  /** Stops the server (SIGTERM) and starts it again on the same port and file. */
  restart(options?: { downForMs?: number }): Promise<void>;
  /** Stops the server, leaving it stopped until `start()`. */
  stopServer(): Promise<void>;
  /** Starts a stopped server again on the same port and file. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A headless `temporal server start-dev` on a fixed port, persisted to `dbFile` when given so
 * that workflows survive a restart.
 */
export async function startPrivateTemporal(options: {
  logger: Logger;
  dbFile?: string;
  namespace?: string;
}): Promise<PrivateTemporal> {
  const cli = await findTemporalCli({ logger: options.logger, env: process.env });
  const port = await freePort();
  const launch = () =>
    startDevServer({
      cliPath: cli.path,
      port,
      headless: true,
      namespace: options.namespace ?? 'default',
      logger: options.logger,
      ...(options.dbFile ? { dbFile: path.resolve(options.dbFile) } : {}),
    });
  let server: DevServer | null = await launch();
  const address = server.address;
  const stopServer = async () => {
    const running = server;
    server = null;
    await running?.stop();
  };
  const start = async () => {
    if (!server) server = await launch();
  };
  return {
    address,
    stopServer,
    start,
    restart: async ({ downForMs = 0 } = {}) => {
      await stopServer();
      if (downForMs > 0) await new Promise((resolve) => setTimeout(resolve, downForMs));
      await start();
    },
    stop: stopServer,
  };
}
