/**
 * What every benchmark runs against, started once per `npm run bench`: a PostgreSQL and a
 * Temporal of the benchmark's own (the dev server, or with `--temporal=cluster` a real cluster of
 * separate services on that PostgreSQL), Trellis as an operator deploys it (an `api` and a
 * `worker` process), and the baseline processes the benchmarks compare with. Baselines use the
 * very same PostgreSQL and Temporal.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client, Connection } from '@temporalio/client';
import type { Kysely } from 'kysely';
import { buildConfig } from '#platform/config/load.js';
import type { TrellisConfig } from '#platform/config/types.js';
import { openDatabase } from '#store/database.js';
import type { Database } from '#store/tables.js';
import { createLogger, type Logger } from '#platform/logging.js';
import { hashPassword } from '#platform/security/password.js';
import { freePort } from '#platform/temporal/dev-server.js';
import { basicAuthorization, createTrellisClient, type TrellisClient } from '../sdk/src/index.js';
import { createDatabase, ensurePostgres } from '../test/support/postgres.js';
import { startPrivateTemporal } from '../test/resilience/support/private-services.js';
import { clusterServices, startTemporalCluster } from '../test/deploy/support/temporal-cluster.js';
import type { PartMatcher } from './cpu.js';
import {
  projectRoot,
  spawnTrellis,
  writeTrellisConfig,
  type TrellisProcess,
} from '../test/resilience/support/trellis-process.js';

/** The pool size of every process that talks to PostgreSQL, ours and the baselines alike. */
export const poolSize = 10;

const credentials = { username: 'bench', password: 'bench-password-not-secret' };

/** The benchmark's one user, as Trellis and the write baseline are configured with it. */
export interface BenchUser {
  username: string;
  password: string;
  /** scrypt, as `npm run hash-password` writes it: what both servers verify against. */
  passwordHash: string;
}

export interface BenchOptions {
  /** Write V8 CPU profiles of the Trellis processes into this folder (`node --cpu-prof`). */
  profileDirectory?: string;
  /** Modules of `bench/experiments/` to preload into the API process (measuring a fix there). */
  experiments?: string[];
  /** Trellis' log level (default warn: the baselines log nothing either). */
  logLevel?: TrellisConfig['Logging']['Level'];
  /** Which Temporal: the dev server (default) or a cluster (`--temporal=cluster`). */
  temporal?: TemporalKind;
}

export type TemporalKind = 'dev-server' | 'cluster';

/** The benchmark's Temporal, whichever kind. */
interface BenchTemporal {
  address: string;
  /** Its processes, for the CPU each part of the machine spends. */
  isPart: PartMatcher;
  stop(): Promise<void>;
}

async function startBenchTemporal(
  kind: TemporalKind,
  pgAdminUrl: Promise<string>,
  folder: string,
  logger: Logger,
): Promise<BenchTemporal> {
  if (kind === 'dev-server') {
    const server = await startPrivateTemporal({ logger });
    const port = server.address.split(':').pop()!;
    const after = (argv: string[], flag: string) => argv[argv.indexOf(flag) + 1];
    return {
      address: server.address,
      isPart: ({ argv }) => argv.includes('start-dev') && after(argv, '--port') === port,
      stop: () => server.stop(),
    };
  }
  const cluster = await startTemporalCluster({
    adminUrl: await pgAdminUrl,
    folder: path.join(folder, 'temporal'),
  });
  return {
    address: cluster.address,
    isPart: ({ pid }) => clusterServices.some((service) => cluster.process(service).pid === pid),
    stop: () => cluster.stop(),
  };
}

export interface BenchEnvironment {
  logger: Logger;
  /** A scratch folder deleted on stop. */
  workDirectory: string;
  /** The Trellis database; the baselines use it too. */
  databaseUrl: string;
  temporalAddress: string;
  /** Which Temporal it is, and which processes are it. */
  temporalKind: TemporalKind;
  isTemporal: PartMatcher;
  /** The task queue of the Trellis worker. */
  taskQueue: string;
  api: TrellisProcess;
  worker: TrellisProcess;
  apiUrl: string;
  /** `Authorization` header value of the benchmark's admin user. */
  authorization: string;
  /** That user (the write baseline authenticates it the same way). */
  user: BenchUser;
  /** Where `--profile` writes V8 CPU profiles (Trellis' and the baselines'), if profiling. */
  profileDirectory?: string;
  /** What each profiled process is (pid → `api`, `worker`, or a baseline's script name). */
  roles: Record<number, string>;
  /** SDK client as the benchmark's admin user. */
  admin: TrellisClient;
  /** The benchmark's own connection to the Trellis database (setup and checks only). */
  db: Kysely<Database>;
  /** The benchmark's own Temporal client (waiting for results, history sizes). */
  temporal: Client;
  /** Starts a baseline script of `bench/baseline/` and resolves once it printed its readiness. */
  startBaseline(script: string, args: Record<string, string>): Promise<BaselineProcess>;
  stop(): Promise<void>;
}

export interface BaselineProcess {
  pid: number;
  /** What the script printed after `ready `, parsed as JSON. */
  ready: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts everything; on failure stops what had started. */
export async function startBenchEnvironment(options: BenchOptions = {}): Promise<BenchEnvironment> {
  const logger = createLogger({ Level: 'info' }, { component: 'bench' });
  const cleanups: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      await cleanup().catch((error: unknown) => logger.warn({ err: error }, 'cleanup failed'));
    }
  };
  try {
    const workDirectory = await mkdtemp(path.join(tmpdir(), 'trellis-bench-'));
    cleanups.push(() => rm(workDirectory, { recursive: true, force: true }));

    const quiet = createLogger({ Level: 'warn' }, { component: 'bench' });
    const starting = ensurePostgres();
    const temporalKind = options.temporal ?? 'dev-server';
    const [postgres, temporalServer] = await Promise.all([
      starting,
      startBenchTemporal(
        temporalKind,
        starting.then(({ adminUrl }) => adminUrl),
        workDirectory,
        quiet,
      ),
    ]);
    cleanups.push(async () => postgres.stop?.());
    cleanups.push(() => temporalServer.stop());
    const databaseUrl = await createDatabase(postgres.adminUrl, `trellis_bench_${Date.now()}`);
    logger.info(
      { temporal: temporalServer.address, kind: temporalKind },
      'PostgreSQL and Temporal are up',
    );

    const taskQueue = 'trellis-bench';
    const user = { ...credentials, passwordHash: await hashPassword(credentials.password) };
    const config = await trellisConfig({
      user,
      databaseUrl,
      temporal: temporalServer,
      taskQueue,
      dataDirectory: path.join(workDirectory, 'data'),
      logLevel: options.logLevel ?? 'warn',
    });
    const configFile = await writeTrellisConfig(
      path.join(workDirectory, 'trellis.config.json'),
      config,
    );
    const nodeArgs = options.profileDirectory ? await profileArgs(options.profileDirectory) : [];
    // Trellis as production runs it: compiled, with the prebuilt workflow bundle.
    buildTrellis();
    // The API first: it migrates the database and installs the built-in plugins.
    const api = await spawnTrellis({
      role: 'api',
      configFile,
      nodeArgs: [...nodeArgs, ...experimentArgs(options.experiments ?? [])],
      compiled: true,
    });
    cleanups.push(() => api.stop());
    const worker = await spawnTrellis({ role: 'worker', configFile, nodeArgs, compiled: true });
    cleanups.push(() => worker.stop());
    if (!api.url) throw new Error('The API process did not print its URL');
    logger.info({ api: api.url }, 'Trellis api and worker processes are up');

    const database = await openDatabase(buildConfig(config), quiet);
    cleanups.push(() => database.close());
    const connection = await Connection.connect({ address: temporalServer.address });
    cleanups.push(() => connection.close());
    const roles: Record<number, string> = { [api.pid]: 'api', [worker.pid]: 'worker' };

    return {
      logger,
      workDirectory,
      databaseUrl,
      temporalAddress: temporalServer.address,
      temporalKind,
      isTemporal: temporalServer.isPart,
      taskQueue,
      api,
      worker,
      apiUrl: api.url,
      authorization: basicAuthorization(credentials.username, credentials.password),
      user,
      ...(options.profileDirectory ? { profileDirectory: options.profileDirectory } : {}),
      roles,
      admin: createTrellisClient({ baseUrl: api.url, basic: credentials }),
      db: database.db,
      temporal: new Client({ connection, namespace: 'default' }),
      startBaseline: async (script, args) => {
        const baseline = await startBaselineProcess(script, args, nodeArgs);
        roles[baseline.pid] = path.basename(script, '.ts');
        cleanups.push(() => baseline.stop());
        return baseline;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function trellisConfig(options: {
  user: BenchUser;
  databaseUrl: string;
  temporal: { address: string };
  taskQueue: string;
  dataDirectory: string;
  logLevel: TrellisConfig['Logging']['Level'];
}) {
  return {
    // One user watches every run of the streams benchmark (500 streams): above the per-user cap.
    Server: {
      Host: '127.0.0.1',
      Port: await freePort(),
      Events: { MaxStreamsPerUser: 1000, MaxStreams: 1000 },
    },
    // The worker's probes: any free port (another bench may run on this machine).
    Metrics: { WorkerPort: 0 },
    DataDirectory: options.dataDirectory,
    Database: { Url: options.databaseUrl, PoolSize: poolSize },
    // The 10,000-task DAG (dag10k) is twice the default limit, which README asks to raise with
    // care (the run's task graph is one Temporal payload): the benchmark measures that it runs.
    Definitions: { MaxTasks: 10_000 },
    Temporal: {
      Address: options.temporal.address,
      Namespace: 'default',
      TaskQueue: options.taskQueue,
    },
    Security: {
      // Hashed, as in production: the credential cache must make that cost rare.
      Basic: {
        Enabled: true,
        Users: [
          {
            Name: options.user.username,
            Password: options.user.passwordHash,
            Roles: ['admin' as const],
          },
        ],
      },
      // One user drives the whole load: above the default per-user rate, which is per person.
      RateLimits: { RequestsPerUserPerMinute: 100_000_000 },
    },
    Logging: { Level: options.logLevel },
  };
}

async function profileArgs(directory: string): Promise<string[]> {
  await mkdir(directory, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${path.resolve(directory)}`];
}

/** `npm run build`: dist/ and the workflow bundle, as a deployment has them. */
function buildTrellis(): void {
  const built = spawnSync(process.execPath, [path.join(projectRoot, 'scripts/build/build.mjs')], {
    cwd: projectRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (built.status !== 0) throw new Error('npm run build failed (errors above)');
}

/** `--import` of each experiment module (after tsx, which loads TypeScript). */
function experimentArgs(experiments: string[]): string[] {
  if (experiments.length === 0) return [];
  return [
    '--import',
    'tsx',
    ...experiments.flatMap((name) => [
      '--import',
      path.join(projectRoot, 'bench/experiments', `${name}.ts`),
    ]),
  ];
}

/**
 * Runs `bench/baseline/<script>` (through tsx) with `--key=value` arguments, and the Node flags
 * Trellis gets (`--cpu-prof` when profiling: the baselines are profiled as ours are).
 */
function startBaselineProcess(
  script: string,
  args: Record<string, string>,
  nodeArgs: string[],
): Promise<BaselineProcess> {
  return spawnReady(process.execPath, [
    ...nodeArgs,
    '--import',
    'tsx',
    path.join(projectRoot, 'bench/baseline', script),
    ...Object.entries(args).map(([key, value]) => `--${key}=${value}`),
  ]);
}

/**
 * Runs a program of the benchmark's (a baseline, a peer's server or workload) and resolves once
 * it printed `ready {json}`, or with `readyUrl` once that answers 2xx; SIGTERM stops it.
 */
export async function spawnReady(
  command: string,
  argv: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; readyUrl?: string } = {},
): Promise<BaselineProcess> {
  const name = path.basename(argv.findLast((arg) => !arg.startsWith('-')) ?? command);
  const child = spawn(command, argv, {
    cwd: options.cwd ?? projectRoot,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const lines = createInterface({ input: child.stdout });
  const ready = await new Promise<Record<string, string>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${output}`)), 120_000);
    const done = (value: Record<string, string>) => {
      clearTimeout(timer);
      resolve(value);
    };
    lines.on('line', (line) => {
      keep(Buffer.from(`${line}\n`));
      if (!options.readyUrl && line.startsWith('ready ')) {
        done(JSON.parse(line.slice('ready '.length)) as Record<string, string>);
      }
    });
    if (options.readyUrl)
      void pollUntilAnswering(options.readyUrl, exited).then((up) => up && done({}));
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${name} exited while starting:\n${output}`));
    });
  });
  return {
    pid: child.pid!,
    ready,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Whether `url` answered 2xx before the process exited. */
async function pollUntilAnswering(url: string, exited: Promise<void>): Promise<boolean> {
  let gone = false;
  void exited.then(() => (gone = true));
  while (!gone) {
    const answered = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (answered) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}
