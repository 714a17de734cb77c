/**
 * `npm run bench [-- --quick] [-- --only=api,exec,dag,logs,lists,startup,streams,foreach,dag10k,soak,fairness,cluster,peers] [-- --peers] [-- --profile] [-- --experiment=<name>] [-- --temporal=cluster]`
 *
 * Starts a PostgreSQL and a Temporal dev server of its own (`--temporal=cluster`: a real cluster
 * of separate services on that PostgreSQL), Trellis as separate `api` and `worker` processes, and
 * the baselines; runs each benchmark of issue 5 with its baseline in the same run (`cluster`
 * runs the execution rate again on a cluster of its own; `peers` runs exec's workload on Prefect,
 * Restate and DBOS, installed on first use, beside exec's figures, so `--peers` is
 * `--only=exec,peers`); prints a table and writes
 * `bench/results/latest.json` (the keys) and
 * `latest-details.json` (rounds, spreads, settings). `--profile` also writes V8 CPU profiles of
 * the Trellis processes to `bench/results/profiles/` and prints where their time went;
 * `--experiment=<name>` preloads `bench/experiments/<name>.ts` into the API process to measure a proposed fix.
 */
import { rm, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { benchmarkApi } from './api.js';
import { benchmarkDag, benchmarkDag10k } from './dag.js';
import { startBenchEnvironment, type BenchEnvironment, type TemporalKind } from './environment.js';
import { benchmarkClusterExecutions, benchmarkExecutions, type ChainFigures } from './exec.js';
import { benchmarkLists } from './lists.js';
import { benchmarkPeers } from './peers.js';
import { benchmarkFairness } from './fairness.js';
import { benchmarkForEach } from './foreach.js';
import { benchmarkLogs } from './logs.js';
import { fullPlan, quickPlan, type Plan } from './plan.js';
import { summarizeProfiles } from './profile.js';
import { benchmarkSoak } from './soak.js';
import { benchmarkStartup } from './startup.js';
import { benchmarkStreams } from './streams.js';
import {
  addPeerResults,
  printTable,
  writeResults,
  type BenchOutcome,
  type Results,
} from './report.js';

const benchmarks = {
  api: (env, plan) => benchmarkApi(env, plan.api),
  exec: (env, plan) => benchmarkExecutions(env, plan.exec),
  dag: (env, plan) => benchmarkDag(env, plan.dag),
  dag10k: (env, plan) => benchmarkDag10k(env, plan.dag10k),
  logs: (env, plan) => benchmarkLogs(env, plan.logs),
  lists: (env, plan) => benchmarkLists(env, plan.lists),
  startup: (env, plan) => benchmarkStartup(env, plan.startup),
  streams: (env, plan) => benchmarkStreams(env, plan.streams),
  soak: (env, plan) => benchmarkSoak(env, plan.soak),
  foreach: (env, plan) => benchmarkForEach(env, plan.foreach),
  fairness: (env, plan) => benchmarkFairness(env, plan.fairness),
  cluster: (_env, plan) => benchmarkClusterExecutions(plan.exec),
  peers: (env, plan, earlier) =>
    benchmarkPeers(
      env,
      plan.exec,
      earlier.exec?.details.sideBySide as Record<'trellis' | 'temporal', ChainFigures> | undefined,
    ),
} satisfies Record<
  string,
  (
    env: BenchEnvironment,
    plan: Plan,
    earlier: Partial<Record<string, BenchOutcome>>,
  ) => Promise<BenchOutcome>
>;
type BenchmarkName = keyof typeof benchmarks;
/** What a run without `--only` runs: all but the peers, which install other products first. */
const standardBenchmarks = (Object.keys(benchmarks) as BenchmarkName[]).filter(
  (name) => name !== 'peers',
);

const resultsDirectory = fileURLToPath(new URL('./results/', import.meta.url));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      profile: { type: 'boolean', default: false },
      experiment: { type: 'string', multiple: true },
      temporal: { type: 'string', default: 'dev-server' },
      peers: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const plan = values.quick ? quickPlan : fullPlan;
  if (values.peers && values.only) throw new Error('--peers is --only=exec,peers: not both');
  const selected = (
    values.peers ? ['exec', 'peers'] : (values.only?.split(',') ?? standardBenchmarks)
  ) as BenchmarkName[];
  const unknown = selected.filter((name) => !(name in benchmarks));
  if (unknown.length > 0) throw new Error(`Unknown benchmark(s): ${unknown.join(', ')}`);
  const temporal = values.temporal as TemporalKind;
  if (!['dev-server', 'cluster'].includes(temporal)) {
    throw new Error(`--temporal is dev-server (the default) or cluster, not ${temporal}`);
  }
  const profileDirectory = values.profile ? path.join(resultsDirectory, 'profiles') : undefined;

  const began = Date.now();
  if (profileDirectory) await rm(profileDirectory, { recursive: true, force: true });
  const experiments = values.experiment ?? [];
  const env = await startBenchEnvironment({
    ...(profileDirectory ? { profileDirectory } : {}),
    experiments,
    temporal,
  });
  const outcomes: Partial<Record<BenchmarkName, BenchOutcome>> = {};
  try {
    for (const name of selected) {
      const started = Date.now();
      env.logger.info(`benchmark ${name} (${plan.mode})`);
      outcomes[name] = await benchmarks[name](env, plan, outcomes);
      env.logger.info(`benchmark ${name} took ${Math.round((Date.now() - started) / 1000)} s`);
    }
  } finally {
    await env.stop();
  }

  const all = Object.values(outcomes);
  printTable(all.flatMap((outcome) => outcome.rows));
  const results = {
    ...Object.assign({}, ...all.map((outcome) => outcome.results)),
    cores: availableParallelism(),
    date: new Date().toISOString(),
  } as Results;
  const details = {
    mode: plan.mode,
    temporal,
    experiments,
    plan,
    seconds: Math.round((Date.now() - began) / 1000),
    node: process.version,
    ...Object.fromEntries(
      Object.entries(outcomes).map(([name, outcome]) => [name, outcome.details]),
    ),
  };
  // The results file holds the product's numbers only: never a partial run, an experiment or a
  // run on a cluster (whose figures the `cluster` benchmark gives).
  if (
    selected.length === standardBenchmarks.length &&
    !selected.includes('peers') &&
    experiments.length === 0 &&
    temporal === 'dev-server'
  ) {
    console.log(`Results: ${await writeResults(resultsDirectory, results, details)}`);
  } else {
    console.log(JSON.stringify(results, null, 2));
  }
  // A peers run adds its peers' keys to the last full run's file (the rest it prints only).
  if (outcomes.peers && experiments.length === 0 && temporal === 'dev-server') {
    const peerDetails = { date: results.date, mode: plan.mode, ...outcomes.peers.details };
    const file = await addPeerResults(resultsDirectory, outcomes.peers.results, peerDetails);
    console.log(
      file
        ? `Peers' keys added to ${file}`
        : "No full run's results to add the peers' keys to: run `npm run bench` first.",
    );
  }
  if (profileDirectory) {
    const phases = all.flatMap((outcome) => outcome.phases ?? []);
    console.log(await summarizeProfiles(profileDirectory, env.roles, 20, phases));
    // `tsx bench/profile.ts` reads them again, phases included.
    await writeFile(
      path.join(profileDirectory, 'phases.json'),
      `${JSON.stringify({ roles: env.roles, phases }, null, 2)}\n`,
    );
  }
}

await main();
