import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import {
  CamelCasePlugin,
  Kysely,
  PostgresDialect,
  sql,
  type PostgresPool,
  type PostgresPoolClient,
} from 'kysely';
import pg from 'pg';
import type { TrellisConfig } from '#platform/config/types.js';
import { TrellisError, Unavailable } from '#definition/errors.js';
import { isProcessAlive, olderThan, removeStaleFolders } from '#platform/leftovers.js';
import type { Logger } from '#platform/logging.js';
import { inProcessConnection } from './in-process-connection.js';
import { LogEntryCapPlugin } from './log-entry-cap.js';
import { listenOnServer, listenThroughPool, type Listen } from './notifications.js';
import type { Database } from './tables.js';

export interface TrellisDatabase {
  db: Kysely<Database>;
  /** True when this process runs its own PGlite instead of using `Database.Url`. */
  embedded: boolean;
  /** LISTEN on a channel (one connection per channel, or the embedded pool's own). */
  listen: Listen;
  /** Releases every connection; for PGlite also shuts it down cleanly so its files are consistent. */
  close(): Promise<void>;
}

/** How long a query may wait for a pooled connection before it fails instead of hanging. */
const connectionTimeoutMillis = 30_000;

/**
 * Opens the database: `Database.Url` → that PostgreSQL through a `pg` pool; absent → an
 * embedded PGlite persisted in `<DataDirectory>/pglite`. Either way the result is the same
 * `pg` driver under Kysely with `CamelCasePlugin`, so both modes parse types identically.
 */
export async function openDatabase(
  config: TrellisConfig,
  logger: Logger,
): Promise<TrellisDatabase> {
  return config.Database.Url
    ? openExternal(config.Database.Url, config.Database.PoolSize, logger, config.ExecutionLogs)
    : openEmbedded(config.DataDirectory, logger, config.ExecutionLogs);
}

/** Fails with `Unavailable` when the database cannot answer (for `/health`). */
export async function checkDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}

/** True for errors meaning "the database cannot be reached", as opposed to a bad query. */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof Unavailable) return true;
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (networkCodes.has(code) || code.startsWith('08') || serverGoneCodes.has(code)) return true;
  }
  return typeof message === 'string' && connectionMessages.some((text) => message.includes(text));
}

const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
  'ENOENT',
]);
// admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections
const serverGoneCodes = new Set(['57P01', '57P02', '57P03', '53300']);
const connectionMessages = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Connection ended',
  'Cannot use a pool after calling end',
  'driver has already been destroyed',
];

async function openExternal(
  url: string,
  poolSize: number,
  logger: Logger,
  logs: ExecutionLogLimits,
) {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis });
  watchPool(pool, logger);
  const db = createKysely(pool, logs);
  try {
    await checkDatabase(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  logger.info({ database: describeUrl(url), poolSize }, 'connected to PostgreSQL');
  let closing: Promise<void> | undefined;
  return {
    db,
    embedded: false,
    listen: listenOnServer(url, logger),
    close: () => (closing ??= db.destroy()),
  };
}

/**
 * PGlite is one single-user Postgres backend inside this process. The ordinary `pg` driver (and
 * its type parsing) reaches it through an in-process stream (`inProcessConnection`), so both
 * modes run the same driver and the embedded database has no address at all: no port, no Unix
 * socket, nothing another process could connect to.
 *
 * The pool holds exactly one connection: PGlite is one session, which concurrent connections
 * would share (a transaction begun by one would take in the other's statements). Consequence
 * for callers: inside `db.transaction()`, use only the transaction object; a query on `db` there
 * would wait for the one connection and fail after `connectionTimeoutMillis`.
 */
async function openEmbedded(
  dataDirectory: string,
  logger: Logger,
  logs: ExecutionLogLimits,
): Promise<TrellisDatabase> {
  const directory = path.join(dataDirectory, 'pglite');
  await mkdir(directory, { recursive: true });
  const unlock = await lockDataDirectory(path.join(dataDirectory, 'pglite.lock'));
  const cleanups: (() => Promise<unknown>)[] = [unlock];
  // Undo in reverse order; every step runs even when an earlier one fails.
  const cleanup = async () => {
    const failures: unknown[] = [];
    for (const step of [...cleanups].reverse()) await step().catch((error) => failures.push(error));
    if (failures.length > 0) throw failures[0];
  };

  try {
    const started = Date.now();
    const stale = await removeStaleFolders(tmpdir(), earlierSocketFolders);
    if (stale.length > 0) {
      logger.info({ folders: stale }, 'removed socket folders left by earlier versions');
    }
    const pglite = await PGlite.create({ dataDir: directory });
    cleanups.push(() => pglite.close());

    const pool = new pg.Pool({
      stream: inProcessConnection(pglite),
      user: 'postgres',
      database: 'postgres',
      max: 1,
      idleTimeoutMillis: 0,
      connectionTimeoutMillis,
    });
    watchPool(pool, logger);
    const listen = listenThroughPool(pool, logger);
    const db = createKysely(pool, logs);
    cleanups.push(() => db.destroy());
    await checkDatabase(db);
    logger.info(
      { directory, startupMs: Date.now() - started },
      'embedded PGlite database ready (set Database.Url to use PostgreSQL)',
    );

    let closing: Promise<void> | undefined;
    return { db, embedded: true, listen, close: () => (closing ??= cleanup()) };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * Earlier versions served the embedded database on a Unix socket in a temporary folder
 * (`trellis-pglite-<pid>-XXXXXX`, or without the pid); a process killed before removing it left
 * the folder behind. One is stale when its process is gone, or, unowned, when nothing answers on
 * its socket.
 */
const earlierSocketFolders = {
  name: /^trellis-pglite-(?:(?<owner>\d+)-)?[A-Za-z0-9]{6}$/,
  unownedIsStale: async (folder: string) =>
    !(await answers(path.join(folder, '.s.PGSQL.5432'))) && (await olderThan(folder, 60_000)),
};

/** Whether something accepts connections on a Unix socket (in doubt, after a second: yes). */
function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(socket);
    const done = (answer: boolean) => {
      clearTimeout(timer);
      probe.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done(true), 1000);
    probe.once('connect', () => done(true));
    probe.once('error', () => done(false));
  });
}

/** Lock files held by this process (a pid file cannot tell this process's two opens apart). */
const heldLocks = new Set<string>();

/**
 * Two PGlite instances on the same files would corrupt them, so the data directory is claimed
 * with a pid file; a file left by a dead process (or by an earlier run with our pid, as PID 1 in
 * a container) is taken over.
 */
async function lockDataDirectory(file: string): Promise<() => Promise<void>> {
  if (heldLocks.has(file)) {
    throw new Error(
      `The embedded database in ${path.dirname(file)} is already open in this process`,
    );
  }
  heldLocks.add(file);
  try {
    const unlock = await claimLockFile(file);
    return async () => {
      heldLocks.delete(file);
      await unlock();
    };
  } catch (error) {
    heldLocks.delete(file);
    throw error;
  }
}

async function claimLockFile(file: string): Promise<() => Promise<void>> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number((await readFile(file, 'utf8').catch(() => '')).trim());
      if (owner && owner !== process.pid && isProcessAlive(owner)) {
        throw new Error(
          `The embedded database in ${path.dirname(file)} is in use by process ${owner}; ` +
            'stop it, or set Database.Url to share a PostgreSQL between processes.',
        );
      }
      await rm(file, { force: true });
    }
  }
  throw new Error(`Could not lock ${file}`);
}

function watchPool(pool: pg.Pool, logger: Logger) {
  // An idle client losing its server (e.g. PostgreSQL restarting) must not crash the process;
  // the pool replaces it on the next checkout.
  pool.on('error', (error) => logger.warn({ err: error }, 'idle database connection failed'));
  // A checked-out client the pool does not listen to: one that loses its server between two
  // queries (a transaction's) emits 'error' on itself, which unheard would end the process. Its
  // next query fails as Unavailable, and the pool drops it on release.
  pool.on('connect', (client) => client.on('error', ignoreLostConnection));
}

function ignoreLostConnection(): void {}

type ExecutionLogLimits = Pick<TrellisConfig['ExecutionLogs'], 'MaxEntryBytes'>;

function createKysely(pool: pg.Pool, logs: ExecutionLogLimits): Kysely<Database> {
  return new Kysely<Database>({
    dialect: new PostgresDialect({ pool: guardPool(pool) }),
    plugins: [
      new LogEntryCapPlugin(logs.MaxEntryBytes),
      // Column names only: keys inside JSON values (outputs, properties, schemas) are the user's.
      new CamelCasePlugin({ maintainNestedObjectKeys: true }),
    ],
  });
}

/**
 * The pool as Kysely sees it, with two guards around every checkout:
 * - connection failures surface as `Unavailable` from any query, whichever repository ran it,
 *   while query errors (constraint violations...) pass unchanged;
 * - a client whose connection failed is destroyed on release rather than handed to the next
 *   query (after a PostgreSQL restart, the server's goodbye arrives before the socket closes).
 */
function guardPool(pool: pg.Pool): PostgresPool {
  return {
    connect: async () => {
      try {
        return new GuardedClient(await pool.connect()) as unknown as PostgresPoolClient;
      } catch (error) {
        throw unavailable(error);
      }
    },
    end: () => pool.end(),
  };
}

/** One checkout of {@link guardPool} (a class: no closures made per query on this hot path). */
class GuardedClient {
  #broken: Error | undefined;

  constructor(private readonly client: pg.PoolClient) {}

  // No cursor is configured, so Kysely never calls the streaming overload of `query`.
  async query(text: string, parameters: unknown[]) {
    try {
      return await this.client.query(text, parameters);
    } catch (error) {
      if (isConnectionError(error)) this.#broken = error as Error;
      throw unavailable(error);
    }
  }

  release() {
    this.client.release(this.#broken);
  }
}

/** `host:port/database` of a PostgreSQL URL, without its credentials. */
export function describeUrl(url: string): string {
  try {
    const { hostname, port, pathname } = new URL(url);
    return `${hostname}:${port || 5432}${pathname}`;
  } catch {
    return 'database';
  }
}

function unavailable(error: unknown): unknown {
  if (error instanceof TrellisError || !isConnectionError(error)) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new Unavailable(`Database unavailable: ${detail}`, {
    cause: error,
    code: 'database.unavailable',
  });
}

/** Resolves when the database answers a query (the readiness probe's check). */
export async function pingDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}
