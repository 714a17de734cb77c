import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** A PostgreSQL server for tests: the admin URL (database `postgres`) and how to stop it. */
export interface TestPostgres {
  adminUrl: string;
  /** Present when this process started the server. */
  stop?: () => Promise<void>;
  /** Restarts a server this process started, keeping its data (for fault tests). */
  restart?: () => Promise<void>;
}

/**
 * `TRELLIS_TEST_DATABASE_URL` when set; otherwise a private throwaway cluster (initdb in a
 * temporary folder, a free port on 127.0.0.1, trust auth, fsync off) that `stop()` deletes.
 */
export async function ensurePostgres(
  env: Record<string, string | undefined> = process.env,
): Promise<TestPostgres> {
  const external = env.TRELLIS_TEST_DATABASE_URL;
  if (external) return { adminUrl: external };
  return startThrowawayCluster();
}

/** Creates an empty database and returns its URL (same server and credentials as `adminUrl`). */
export async function createDatabase(adminUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) {
    throw new Error(`Invalid test database name "${name}" (lower-case letters, digits, _)`);
  }
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`create database "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function startThrowawayCluster(): Promise<TestPostgres> {
  const bin = await findPostgresBinaries();
  const root = await mkdtemp(path.join(tmpdir(), 'trellis-pg-'));
  const dataDirectory = path.join(root, 'data');
  const logFile = path.join(root, 'log');
  let port = await freePort();
  // PostgreSQL refuses to run as root; as root, run its tools as the `postgres` OS user.
  const asRoot = userInfo().uid === 0;
  const postgresUser = asRoot ? await lookupUser('postgres') : undefined;
  if (postgresUser) await chown(root, postgresUser.uid, postgresUser.gid);

  const tool = (name: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, name), ...args])
      : run(path.join(bin, name), args);

  const settings = () =>
    [
      `-p ${port}`,
      `-k ${root}`,
      "-c listen_addresses='127.0.0.1'",
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      '-c max_connections=300',
    ].join(' ');
  const start = () =>
    tool('pg_ctl', [
      'start',
      '-w',
      '-t',
      '60',
      '-D',
      dataDirectory,
      '-l',
      logFile,
      '-o',
      settings(),
    ]);
  /**
   * Starts the server; a port taken between `freePort` and the server's bind (by a Temporal dev
   * server started beside it, say) is given up for another, twice at most.
   */
  const startOnAFreePort = async () => {
    for (let tries = 1; ; tries++) {
      const failure = await start().then(
        () => undefined,
        (error: unknown) => error,
      );
      if (failure === undefined) return;
      const log = await readFile(logFile, 'utf8').catch(() => '');
      if (tries < 3 && /could not (bind|create listen socket)/i.test(log)) {
        port = await freePort();
        continue;
      }
      throw new Error(
        `${describe(failure)}\nThe server's log ends:\n${log.split('\n').slice(-12).join('\n')}`,
      );
    }
  };
  const stopServer = (mode: string) =>
    tool('pg_ctl', ['stop', '-w', '-m', mode, '-D', dataDirectory]);

  try {
    await tool('initdb', [
      '-D',
      dataDirectory,
      '-U',
      'postgres',
      '-A',
      'trust',
      '-E',
      'UTF8',
      '--no-locale',
      '--no-sync',
    ]);
    await startOnAFreePort();
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw new Error(`Could not start a throwaway PostgreSQL from ${bin}: ${describe(error)}`);
  }

  let stopped = false;
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: async () => {
      await stopServer('fast');
      await start();
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await stopServer('immediate').catch(() => undefined);
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** `pg_config --bindir`, else the newest `/usr/lib/postgresql/<version>/bin` holding initdb. */
async function findPostgresBinaries(): Promise<string> {
  try {
    const { stdout } = await run('pg_config', ['--bindir']);
    const bin = stdout.trim();
    if (existsSync(path.join(bin, 'initdb'))) return bin;
  } catch {
    // not installed; fall through to the Debian layout
  }
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((version) => existsSync(path.join(root, version, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0] === undefined) {
    throw new Error(
      'PostgreSQL server binaries not found (pg_config --bindir, /usr/lib/postgresql/*/bin). ' +
        'Install the Debian package "postgresql" or set TRELLIS_TEST_DATABASE_URL.',
    );
  }
  return path.join(root, versions[0], 'bin');
}

async function lookupUser(name: string): Promise<{ uid: number; gid: number }> {
  const { stdout } = await run('id', ['-u', name]).catch(() => {
    throw new Error(`Running as root needs a "${name}" OS user to run PostgreSQL`);
  });
  const { stdout: group } = await run('id', ['-g', name]);
  return { uid: Number(stdout.trim()), gid: Number(group.trim()) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function describe(error: unknown): string {
  const { message, stderr } = error as { message?: string; stderr?: string };
  return [message, stderr].filter(Boolean).join('\n');
}
