/**
 * A real Temporal cluster, not the dev server: deploy/compose.yaml's `temporal` as processes. The
 * Temporal server of the release compose runs, built from it (scripts/setup/setup-temporal-server.sh),
 * configured by the template its image runs with and the service's environment, on PostgreSQL
 * persistence and visibility, its frontend, history, matching and worker services each a process
 * of its own, as a production cluster runs them. For the topology test on a cluster and
 * `npm run bench -- --temporal=cluster`.
 *
 * What differs from the containers, as for the topology's Trellis processes: the PostgreSQL (the
 * tests' own, two databases of its own), loopback addresses and free ports, and the dynamic
 * config file compose mounts read where it lies. The schema is set up with Temporal's SQL tool as
 * compose's `temporal-schema` does, and the namespace is registered through the frontend, as
 * `temporal-namespace` does.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { createServer } from 'node:net';
import { freePort } from '#platform/temporal/dev-server.js';
import { loadCompose, serviceEnvironment } from './recipes.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
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

/**
 * The built server and SQL tool, and the image's configuration template; builds them when
 * missing (minutes, once).
 */
export function temporalServerRelease(): {
  version: string;
  server: string;
  sqlTool: string;
  template: string;
} {
  const setup = spawnSync('bash', [path.join(root, 'scripts/setup/setup-temporal-server.sh')], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (setup.status !== 0) throw new Error('scripts/setup/setup-temporal-server.sh failed');
  const folder = setup.stdout.trim().split('\n').at(-1)!;
  return {
    version: readFileSync(path.join(folder, 'version'), 'utf8').trim().replace(/^v/, ''),
    server: path.join(folder, 'temporal-server'),
    sqlTool: path.join(folder, 'temporal-sql-tool'),
    template: path.join(folder, 'config/docker.yaml'),
  };
}

/**
 * deploy/compose.yaml's `temporal` service: its image's release (the TEMPORAL_VERSION default),
 * its environment, and the host file mounted where DYNAMIC_CONFIG_FILE_PATH points.
 */
export function composeTemporal(): {
  version: string;
  environment: Record<string, string>;
  dynamicConfig: string;
} {
  const service = loadCompose({
    POSTGRES_PASSWORD: 'unused: the cluster gets the test database',
    TRELLIS_ADMIN_PASSWORD: 'unused',
    TRELLIS_ENCRYPTION_KEY: 'unused',
  }).services.temporal!;
  const environment = serviceEnvironment(service);
  const mounted = (service.volumes ?? [])
    .map((volume) => volume.split(':'))
    .find(([, target]) => target === environment.DYNAMIC_CONFIG_FILE_PATH);
  if (!mounted) throw new Error('compose: no volume mounts DYNAMIC_CONFIG_FILE_PATH of temporal');
  return {
    version: String(service.image).split(':').pop()!,
    environment,
    dynamicConfig: path.join(root, 'deploy', mounted[0]!),
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
  const binaries = temporalServerRelease();
  const compose = composeTemporal();
  if (compose.version !== binaries.version) {
    throw new Error(
      `deploy/compose.yaml runs Temporal ${compose.version}, scripts/setup/setup-temporal-server.sh builds ${binaries.version}: make them one release`,
    );
  }
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
  const environment: Record<string, string> = {
    ...compose.environment,
    POSTGRES_SEEDS: pg.hostname,
    DB_PORT: pg.port || '5432',
    // The template reads the visibility store's port from this one, not DB_PORT.
    VISIBILITY_DB_PORT: pg.port || '5432',
    POSTGRES_USER: decodeURIComponent(pg.username),
    POSTGRES_PWD: decodeURIComponent(pg.password),
    DBNAME: databases.default,
    VISIBILITY_DBNAME: databases.visibility,
    BIND_ON_IP: host,
    TEMPORAL_BROADCAST_ADDRESS: host,
    DYNAMIC_CONFIG_FILE_PATH: compose.dynamicConfig,
    NUM_HISTORY_SHARDS: String(options.historyShards ?? 4),
    LOG_LEVEL: 'warn',
    FRONTEND_HTTP_PORT: String(await freePort()),
    ...Object.fromEntries(
      clusterServices.flatMap((service) => [
        [`${service.toUpperCase()}_GRPC_PORT`, String(ports[service].grpc)],
        [`${service.toUpperCase()}_MEMBERSHIP_PORT`, String(ports[service].membership)],
      ]),
    ),
  };

  const processes = new Map<ClusterService, ChildProcess>();
  /** Services stopped on purpose (`kill`, `stop`); any other exit is a crash. */
  const stopped = new Set<ClusterService>();
  const start = async (service: ClusterService) => {
    stopped.delete(service);
    const log = path.join(folder, `${service}.log`);
    await appendFile(log, `--- ${new Date().toISOString()} start\n`);
    const child = spawn(
      binaries.server,
      ['--config-file', binaries.template, '--allow-no-auth', 'start', '--service', service],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...environment } },
    );
    child.stdout.on('data', (chunk: Buffer) => void appendFile(log, chunk));
    child.stderr.on('data', (chunk: Buffer) => void appendFile(log, chunk));
    // As compose's `restart: unless-stopped`: a service that gives up (one that starts before
    // the others answer may, on a busy machine) is started again.
    child.once('exit', () => {
      if (stopped.has(service)) return;
      setTimeout(() => void (stopped.has(service) ? undefined : start(service)), 1_000);
    });
    processes.set(service, child);
  };
  const exit = async (service: ClusterService, signal: NodeJS.Signals) => {
    stopped.add(service);
    const child = processes.get(service);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(timer);
  };
  const kill = (service: ClusterService) => exit(service, 'SIGKILL');
  const stop = async () => {
    await Promise.all(clusterServices.map((service) => exit(service, 'SIGTERM')));
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
