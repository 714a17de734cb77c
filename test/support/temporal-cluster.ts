/**
 * A real Temporal cluster, not the dev server: the Temporal server built from its release
 * (scripts/setup/setup-temporal-server.sh) on PostgreSQL persistence and visibility, its
 * frontend, history, matching and worker services each a process of its own, as a production
 * cluster runs them. For the topology test on a cluster and `npm run bench -- --temporal=cluster`.
 *
 * The databases are made on the PostgreSQL given (the tests' own) and the schema is set up with
 * Temporal's SQL tool, as its documentation does for a new cluster; the dynamic config is the
 * dev server's (fairness on, the history service's task reads), and the namespace is registered
 * through the frontend, as an operator registers one.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { createServer } from 'node:net';
import { devServerDynamicConfig, freePort } from '#platform/temporal/dev-server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const host = '127.0.0.1';

export const clusterServices = ['history', 'matching', 'frontend', 'worker'] as const;
export type ClusterService = (typeof clusterServices)[number];

export interface TemporalCluster {
  /** The frontend's `host:port`, for `Connection.connect`. */
  address: string;
  namespace: string;
  /** Where its configuration and each service's log are. */
  folder: string;
  /** The running process of a service (its pid, to kill or measure). */
  process(service: ClusterService): ChildProcess;
  /** SIGKILLs a service and resolves once it is gone. */
  kill(service: ClusterService): Promise<void>;
  /** Starts a service again (after `kill`). */
  restart(service: ClusterService): Promise<void>;
  /** Stops every service (SIGTERM, then SIGKILL); safe to call twice. */
  stop(): Promise<void>;
}

/** The folder of the built server and SQL tool; builds them when missing (minutes, once). */
export function temporalServerBinaries(): { server: string; sqlTool: string } {
  const setup = spawnSync('bash', [path.join(root, 'scripts/setup/setup-temporal-server.sh')], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (setup.status !== 0) throw new Error('scripts/setup/setup-temporal-server.sh failed');
  const folder = setup.stdout.trim().split('\n').at(-1)!;
  return {
    server: path.join(folder, 'temporal-server'),
    sqlTool: path.join(folder, 'temporal-sql-tool'),
  };
}

/**
 * Starts a cluster on the PostgreSQL of `adminUrl` (a superuser's URL: it creates the cluster's
 * two databases), in `folder`; resolves once the frontend answers for the namespace.
 */
export async function startTemporalCluster(options: {
  adminUrl: string;
  folder: string;
  namespace?: string;
  /** Persistence shards (the history service's unit of work); 4 as Temporal's own dev config. */
  historyShards?: number;
}): Promise<TemporalCluster> {
  const { folder } = options;
  const namespace = options.namespace ?? 'default';
  const binaries = temporalServerBinaries();
  await mkdir(folder, { recursive: true });
  const suffix = randomUUID().replaceAll('-', '').slice(0, 10);
  const databases = { default: `temporal_${suffix}`, visibility: `temporal_vis_${suffix}` };
  const pg = new URL(options.adminUrl);
  const sql = (database: string, ...args: string[]) =>
    run(binaries.sqlTool, [
      ...['--plugin', 'postgres12', '--ep', pg.hostname, '-p', pg.port || '5432'],
      ...['-u', decodeURIComponent(pg.username), '--db', database],
      ...(pg.password ? ['--pw', decodeURIComponent(pg.password)] : []),
      ...args,
    ]);
  for (const [store, database] of Object.entries(databases)) {
    const schema = store === 'default' ? 'temporal' : 'visibility';
    await sql(database, 'create-database');
    await sql(database, 'setup-schema', '-v', '0.0');
    await sql(database, 'update-schema', '-s', `postgresql/v12/${schema}`);
  }

  const ports = Object.fromEntries(
    await Promise.all(
      clusterServices.map(async (service) => [
        service,
        { grpc: await freePort(), membership: await freeMembershipPort() },
      ]),
    ),
  ) as Record<ClusterService, { grpc: number; membership: number }>;
  const address = `${host}:${ports.frontend.grpc}`;
  const dynamicConfig = path.join(folder, 'dynamic-config.yaml');
  await writeFile(
    dynamicConfig,
    Object.entries(devServerDynamicConfig)
      .map(([key, value]) => `${key}:\n  - value: ${JSON.stringify(value)}\n`)
      .join(''),
  );
  const config = path.join(folder, 'temporal-server.yaml');
  await writeFile(
    config,
    serverConfig({
      pg,
      databases,
      ports,
      address,
      dynamicConfig,
      shards: options.historyShards ?? 4,
    }),
  );

  const processes = new Map<ClusterService, ChildProcess>();
  const start = async (service: ClusterService) => {
    const log = path.join(folder, `${service}.log`);
    await appendFile(log, `--- ${new Date().toISOString()} start\n`);
    const child = spawn(
      binaries.server,
      ['--config-file', config, '--allow-no-auth', 'start', '--service', service],
      { stdio: ['ignore', 'pipe', 'pipe'], detached: false },
    );
    child.stdout.on('data', (chunk: Buffer) => void appendFile(log, chunk));
    child.stderr.on('data', (chunk: Buffer) => void appendFile(log, chunk));
    processes.set(service, child);
  };
  const kill = async (service: ClusterService) => {
    const child = processes.get(service);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  };
  const stop = async () => {
    await Promise.all(
      [...processes.values()].map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await gone;
        clearTimeout(timer);
      }),
    );
  };
  const cluster: TemporalCluster = {
    address,
    namespace,
    folder,
    process: (service) => processes.get(service)!,
    kill,
    restart: start,
    stop,
  };
  try {
    for (const service of clusterServices) await start(service);
    await registerNamespace(address, namespace);
  } catch (error) {
    await stop();
    const logs = await Promise.all(
      clusterServices.map(async (service) => {
        const log = await readFile(path.join(folder, `${service}.log`), 'utf8').catch(() => '');
        return `--- ${service}:\n${log.slice(-1500)}`;
      }),
    );
    throw new Error(`${(error as Error).message}\n${logs.join('\n')}`);
  }
  return cluster;
}

/**
 * A free port for a service's membership: Temporal's SQL schema keeps it as a `smallint`, so it
 * must be below 32768, where the kernel's ephemeral ports (what `freePort` gets) seldom are.
 */
async function freeMembershipPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, host, () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** Registers the namespace through the frontend once it answers (its services join first). */
async function registerNamespace(address: string, namespace: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2_000 });
      try {
        await connection.workflowService
          .registerNamespace({
            namespace,
            workflowExecutionRetentionPeriod: msToTs('1 day'),
          })
          .catch((error: Error) => {
            if (!/already exists|already registered/i.test(error.message)) throw error;
          });
        // The namespace is cached by every service: it is usable once a read of it succeeds.
        await connection.workflowService.listWorkflowExecutions({ namespace, pageSize: 1 });
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      if (Date.now() > deadline) {
        throw new Error(`The Temporal cluster did not answer within 90 s: ${String(error)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

function serverConfig(options: {
  pg: URL;
  databases: { default: string; visibility: string };
  ports: Record<ClusterService, { grpc: number; membership: number }>;
  address: string;
  dynamicConfig: string;
  shards: number;
}): string {
  const { pg, databases, ports } = options;
  const store = (database: string, connections: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName: database,
      connectAddr: `${pg.hostname}:${pg.port || '5432'}`,
      connectProtocol: 'tcp',
      user: decodeURIComponent(pg.username),
      ...(pg.password ? { password: decodeURIComponent(pg.password) } : {}),
      maxConns: connections,
      maxIdleConns: connections,
      maxConnLifetime: '1h',
    },
  });
  // JSON is YAML: the server reads this file as YAML.
  return JSON.stringify(
    {
      log: { stdout: true, level: 'warn' },
      persistence: {
        defaultStore: 'default',
        visibilityStore: 'visibility',
        numHistoryShards: options.shards,
        datastores: {
          default: store(databases.default, 20),
          visibility: store(databases.visibility, 10),
        },
      },
      global: { membership: { maxJoinDuration: '30s', broadcastAddress: host } },
      services: Object.fromEntries(
        clusterServices.map((service) => [
          service,
          {
            rpc: {
              grpcPort: ports[service].grpc,
              membershipPort: ports[service].membership,
              bindOnLocalHost: true,
            },
          },
        ]),
      ),
      clusterMetadata: {
        enableGlobalNamespace: false,
        failoverVersionIncrement: 10,
        masterClusterName: 'active',
        currentClusterName: 'active',
        clusterInformation: {
          active: {
            enabled: true,
            initialFailoverVersion: 1,
            rpcName: 'frontend',
            rpcAddress: options.address,
          },
        },
      },
      dcRedirectionPolicy: { policy: 'noop' },
      dynamicConfigClient: { filepath: options.dynamicConfig, pollInterval: '10s' },
    },
    null,
    2,
  );
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${path.basename(command)} ${args.join(' ')}: exit ${code}\n${output}`)),
    );
  });
}
