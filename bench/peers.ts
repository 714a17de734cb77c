/**
 * Trellis beside its peers, on the same machine in the same run: the exec benchmark's workload
 * (a chain of three no-op steps, 50 executions in flight; one 1-step execution at a time for the
 * latency) on each peer, set up as its documentation recommends (bench/README.md says how):
 * - `prefect`: a Prefect 3 server on the benchmark's PostgreSQL, the flow served as a deployment
 *   by `flow.serve()`, runs created through the server's API;
 * - `restate`: the Restate server (its npm package's binary) and a service of its TypeScript
 *   SDK, invoked through the server's ingress;
 * - `dbos`: a DBOS application on the benchmark's PostgreSQL, its workflows called from an HTTP
 *   handler in the same process.
 * Each is installed on first use (`peers/install.ts`), measured, stopped, one after another.
 * A peer that cannot be installed or run is reported with the reason, not left out silently.
 */
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { freePort } from '#platform/temporal/dev-server.js';
import { createDatabase } from '../test/support/postgres.js';
import { projectRoot } from '../test/resilience/support/trellis-process.js';
import type { PartMatcher } from './cpu.js';
import { poolSize, spawnReady, type BenchEnvironment } from './environment.js';
import {
  cpuLine,
  machineParts,
  medianCpu,
  roundMeasurer,
  type ChainFigures,
  type Round,
} from './exec.js';
import { installPeer, peerPackages, restateServerBinary, type PeerName } from './peers/install.js';
import type { Plan } from './plan.js';
import type { BenchOutcome, Results, TableRow } from './report.js';
import { percentile, round, summarize } from './stats.js';

/** A peer, started: how to run one execution of `steps` no-op steps, and which processes it is. */
interface RunningPeer {
  /** Resolves once the execution completed, as the peer reports it. */
  run(steps: number): Promise<void>;
  /** Its processes (their children count with them). */
  processes: Record<string, PartMatcher>;
  /** Whether it keeps its state in the benchmark's PostgreSQL (whose CPU then counts as its). */
  usesPostgres: boolean;
  /** Fewer executions per round than the plan's, for a peer too slow to run that many. */
  executionsPerRound?: number;
  stop(): Promise<void>;
}

type StartPeer = (env: BenchEnvironment, folder: string, inFlight: number) => Promise<RunningPeer>;

const peers: Record<PeerName, StartPeer> = {
  prefect: startPrefect,
  restate: startRestate,
  dbos: startDbos,
};

export async function benchmarkPeers(
  env: BenchEnvironment,
  plan: Plan['exec'],
  sideBySide: Record<'trellis' | 'temporal', ChainFigures> | undefined,
): Promise<BenchOutcome> {
  const measured: Partial<Record<PeerName, ChainFigures>> = {};
  const failed: Partial<Record<PeerName, string>> = {};
  for (const name of Object.keys(peers) as PeerName[]) {
    const started = Date.now();
    try {
      const folder = await installPeer(name, env.logger);
      env.logger.info({ peer: name }, 'starting a peer');
      const peer = await peers[name](env, folder, plan.inFlight);
      try {
        measured[name] = await measurePeer(env, plan, peer);
      } finally {
        await peer.stop();
      }
    } catch (error) {
      failed[name] = error instanceof Error ? error.message : String(error);
      env.logger.warn({ peer: name, err: error }, 'peer could not be measured');
    }
    env.logger.info({ peer: name, seconds: Math.round((Date.now() - started) / 1000) }, 'peer');
  }

  const results: Partial<Results> = {};
  for (const [name, figures] of Object.entries(measured) as [PeerName, ChainFigures][]) {
    results[`peer_${name}_exec_per_s`] = round(figures.perSecond, 1);
    results[`peer_${name}_p50_ms`] = round(figures.p50, 1);
  }
  const trellis = sideBySide?.trellis;
  const row = (label: string, figures: ChainFigures | undefined, failure?: string): TableRow => ({
    metric: `peers: ${label}: 3-step chain exec/s · 1-step p50 / p99 ms · CPU ms per execution`,
    ours: trellis ? describe(trellis) : 'run with exec (--peers)',
    baseline: figures ? describe(figures) : `not measured: ${failure ?? 'exec did not run'}`,
    ratio: trellis && figures ? round(trellis.perSecond / figures.perSecond).toString() : '',
    target: '',
  });
  return {
    results,
    rows: [
      row('plain Temporal (3 local activities)', sideBySide?.temporal),
      ...(Object.keys(peers) as PeerName[]).map((name) =>
        row(`${name} ${versionOf(name)}`, measured[name], failed[name]),
      ),
    ],
    details: {
      note: 'ours is Trellis (the exec benchmark of this run); ratio is Trellis exec/s ÷ the other’s; CPU µs per execution by process, PostgreSQL included for those that keep their state there',
      inFlight: plan.inFlight,
      executionsPerRound: plan.executionsPerRound,
      rounds: plan.rounds,
      latencySamples: plan.latencySamples,
      packages: peerPackages,
      ...sideBySide,
      ...measured,
      ...(Object.keys(failed).length > 0 ? { failed } : {}),
    },
  };
}

function versionOf(name: PeerName): string {
  const packages: readonly string[] = Object.values(peerPackages[name])[0]!;
  return /[@=]=?(\d[\w.-]*)$/.exec(packages[0]!)?.[1] ?? '';
}

function describe(figures: ChainFigures): string {
  const cpuMs = Object.values(figures.cpuMicros).reduce((sum, micros) => sum + micros, 0) / 1000;
  return `${round(figures.perSecond, 1)} · ${round(figures.p50, 1)} / ${round(figures.p99, 1)} · ${round(cpuMs, 1)}`;
}

/** The exec benchmark's measurement on a peer: warm-up, rounds of 3-step chains, 1-step latencies. */
async function measurePeer(
  env: BenchEnvironment,
  plan: Plan['exec'],
  peer: RunningPeer,
): Promise<ChainFigures & { executionsPerRound: number }> {
  const { postgres, bench } = machineParts(env);
  const parts = { ...peer.processes, postgres: postgres!, bench: bench! };
  const measuredRound = roundMeasurer(parts, plan.inFlight);
  const chain = () => peer.run(3);
  const executions = peer.executionsPerRound ?? plan.executionsPerRound;
  await measuredRound(chain, Math.min(plan.inFlight, executions));
  const rounds: Round[] = [];
  for (let index = 0; index < plan.rounds; index++) {
    rounds.push(await measuredRound(chain, executions));
  }
  const latencies: number[] = [];
  for (let index = 0; index < plan.latencySamples; index++) {
    const started = performance.now();
    await peer.run(1);
    latencies.push(performance.now() - started);
  }
  const cpu = medianCpu(rounds);
  const own = [...Object.keys(peer.processes), ...(peer.usesPostgres ? ['postgres'] : [])];
  env.logger.info({ cpu: cpuLine(cpu) }, 'peer CPU µs per execution');
  return {
    executionsPerRound: executions,
    perSecond: summarize(rounds.map((measured) => measured.perSecond)).median,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuMicros: Object.fromEntries(own.map((part) => [part, cpu[part] ?? 0])),
  };
}

/** A database of its own for a peer, on the benchmark's PostgreSQL server. */
async function peerDatabase(env: BenchEnvironment, name: string): Promise<string> {
  const admin = new URL(env.databaseUrl);
  admin.pathname = '/postgres';
  return createDatabase(admin.toString(), `${name}_bench_${Date.now()}`);
}

const isProcess =
  (pid: number): PartMatcher =>
  (process) =>
    process.pid === pid;

/** Stops what started, last first, even when one of them fails to stop. */
function stopAll(...started: { stop(): Promise<void> }[]): () => Promise<void> {
  return async () => {
    for (const part of started.reverse()) await part.stop().catch(() => undefined);
  };
}

async function expectOk(response: Response, what: string): Promise<Response> {
  if (!response.ok) throw new Error(`${what}: ${response.status} ${await response.text()}`);
  return response;
}

function runWorkload(script: string, args: Record<string, string>, env = process.env) {
  return spawnReady(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(projectRoot, 'bench/peers', script),
      ...Object.entries(args).map(([key, value]) => `--${key}=${value}`),
    ],
    { env },
  );
}

async function startDbos(env: BenchEnvironment, folder: string): Promise<RunningPeer> {
  const database = await peerDatabase(env, 'dbos');
  const app = await runWorkload('dbos/app.ts', {
    modules: folder,
    database,
    pool: String(poolSize),
  });
  return {
    run: async (steps) => {
      const response = await fetch(`${app.ready.url}/chain/${steps}`, { method: 'POST' });
      await (await expectOk(response, 'DBOS workflow')).arrayBuffer();
    },
    processes: { dbos: isProcess(app.pid) },
    usesPostgres: true,
    stop: stopAll(app),
  };
}

async function startRestate(env: BenchEnvironment, folder: string): Promise<RunningPeer> {
  const [ingress, admin, node] = [await freePort(), await freePort(), await freePort()];
  const server = await spawnReady(
    restateServerBinary(folder),
    [
      '--no-logo',
      '--listen-mode=tcp',
      `--base-dir=${path.join(env.workDirectory, 'restate')}`,
      `--bind-address=127.0.0.1:${node}`,
      `--advertised-address=http://127.0.0.1:${node}`,
    ],
    {
      env: {
        ...process.env,
        RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
        RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
        RESTATE_LOG_FILTER: 'warn',
        // Its usage report and version check would try a network this machine does not reach.
        RESTATE_DISABLE_TELEMETRY: 'true',
      },
      readyUrl: `http://127.0.0.1:${admin}/health`,
    },
  );
  // Warnings only, as Trellis and the other peers log (the SDK logs two lines per invocation).
  const service = await runWorkload(
    'restate/service.ts',
    { modules: folder },
    { ...process.env, RESTATE_LOGGING: 'WARN' },
  ).catch(async (error: unknown) => {
    await server.stop();
    throw error;
  });
  const stop = stopAll(server, service);
  try {
    await expectOk(
      await fetch(`http://127.0.0.1:${admin}/deployments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ uri: service.ready.url }),
      }),
      'Restate deployment registration',
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    run: async (steps) => {
      const response = await fetch(`http://127.0.0.1:${ingress}/Chain/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(steps),
      });
      await (await expectOk(response, 'Restate invocation')).arrayBuffer();
    },
    processes: {
      'restate-server': isProcess(server.pid),
      'restate-service': isProcess(service.pid),
    },
    usesPostgres: false,
    stop,
  };
}

async function startPrefect(
  env: BenchEnvironment,
  folder: string,
  inFlight: number,
): Promise<RunningPeer> {
  const database = new URL(await peerDatabase(env, 'prefect'));
  database.protocol = 'postgresql+asyncpg:';
  const port = await freePort();
  const api = `http://127.0.0.1:${port}/api`;
  const prefectEnv = {
    ...process.env,
    PREFECT_HOME: path.join(env.workDirectory, 'prefect'),
    PREFECT_API_URL: api,
    PREFECT_SERVER_ANALYTICS_ENABLED: 'false',
    DO_NOT_TRACK: '1',
    PREFECT_LOGGING_LEVEL: 'WARNING',
  };
  const server = await spawnReady(
    path.join(folder, 'bin/prefect'),
    ['server', 'start', '--host', '127.0.0.1', '--port', String(port)],
    {
      env: { ...prefectEnv, PREFECT_API_DATABASE_CONNECTION_URL: database.toString() },
      readyUrl: `${api}/health`,
    },
  );
  // The runner asks the server for due runs every second (its default is 10 s, which would
  // measure the poll more than Prefect).
  const runner = await spawnReady(
    path.join(folder, 'bin/python'),
    [path.join(projectRoot, 'bench/peers/prefect/flows.py'), `--limit=${inFlight}`],
    { env: { ...prefectEnv, PREFECT_RUNNER_POLL_FREQUENCY: '1' } },
  ).catch(async (error: unknown) => {
    await server.stop();
    throw error;
  });
  const stop = stopAll(server, runner);
  const deploymentId = await waitForDeployment(api).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  const flowRuns = new FlowRunWatcher(api);
  return {
    run: async (steps) => {
      const response = await fetch(`${api}/deployments/${deploymentId}/create_flow_run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ parameters: { steps } }),
      });
      const { id } = (await (await expectOk(response, 'Prefect flow run')).json()) as {
        id: string;
      };
      const state = await flowRuns.finished(id);
      if (state !== 'COMPLETED') throw new Error(`Prefect flow run ${id} ${state}`);
    },
    processes: { 'prefect-server': isProcess(server.pid), 'prefect-runner': isProcess(runner.pid) },
    usesPostgres: true,
    // A process per flow run makes it about 1 execution/s on 2 cores: rounds of the executions
    // in flight, not of the plan's (which would take minutes each).
    executionsPerRound: inFlight,
    stop: async () => {
      await flowRuns.close();
      await stop();
    },
  };
}

/** `flow.serve()` stores its deployment in the server once it started. */
async function waitForDeployment(api: string): Promise<string> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const response = await fetch(`${api}/deployments/name/chain/bench`);
    if (response.ok) return ((await response.json()) as { id: string }).id;
    if (Date.now() > deadline) throw new Error('The Prefect deployment did not appear');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * Waits for flow runs to finish with one filter request for all that are pending, every 50 ms:
 * one poller per run at 50 in flight would load the server with reads that Trellis, whose
 * benchmark waits on Temporal's long poll, is not asked for.
 */
class FlowRunWatcher {
  private readonly pending = new Map<
    string,
    { resolve: (state: string) => void; reject: (error: unknown) => void }
  >();
  private closed = false;
  private readonly polling: Promise<void>;

  constructor(private readonly api: string) {
    this.polling = this.poll();
  }

  /** The state type the flow run ended in (`COMPLETED`, `FAILED`, …). */
  finished(id: string): Promise<string> {
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.polling;
  }

  private async poll(): Promise<void> {
    while (!this.closed) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (this.pending.size === 0) continue;
      try {
        const response = await fetch(`${this.api}/flow_runs/filter`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            flow_runs: {
              id: { any_: [...this.pending.keys()] },
              state: { type: { any_: ['COMPLETED', 'FAILED', 'CRASHED', 'CANCELLED'] } },
            },
          }),
        });
        const runs = (await (await expectOk(response, 'Prefect flow runs')).json()) as {
          id: string;
          state: { type: string };
        }[];
        for (const run of runs) {
          this.pending.get(run.id)?.resolve(run.state.type);
          this.pending.delete(run.id);
        }
      } catch (error) {
        for (const waiter of this.pending.values()) waiter.reject(error);
        this.pending.clear();
      }
    }
  }
}
