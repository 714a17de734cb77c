/**
 * No noisy neighbour (issue 29): a quiet project's one-task runs, one at a time, while another
 * project floods the task queue, against the same runs with no flood.
 * - `fair_quiet_p50_ms` / `fair_quiet_p99_ms`: a one-task `Flow/NoOp` run of the quiet project,
 *   `POST` until `GET` shows it Completed (as `exec_e2e_*`), nothing else running;
 * - `fair_flood_p50_ms` / `fair_flood_p99_ms`: the same while another project has started
 *   `floodRuns` runs of `floodTasks` chained `Flow/Delay` (0 ms) tasks, regular activities whose
 *   tasks back up in the task queue; `fair_p99_ratio` is flood ÷ quiet, target ≤ 2;
 * - `fair_limited_flood_*` / `fair_limited_p99_ratio`: the same flood from a project whose
 *   `startsPerMinute` limit holds it back, by a client that honours `Retry-After`, measured from
 *   its first 429;
 * - `fair_same_key_p99_ms` / `fair_same_key_ratio`: the control, the same flood started in the
 *   quiet project itself, so that every task has one fairness key: what a flood does to a
 *   neighbour without a key of its own.
 * - `fair_temporal_*`: the peer figure, plain Temporal under the same flood on the same server:
 *   the baseline worker's one-local-activity workflow (as `exec_e2e`'s baseline) with a fairness
 *   key of its own while workflows of `floodTasks` regular activities, bookended by two local
 *   ones, flood with another key. What Temporal's fairness keys alone give on this machine.
 * The flood's starts and the quiet runs share the one API process and the one worker; the
 * benchmark waits for each flood to drain before the next phase.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { TrellisApiError, createTrellisClient, type TrellisClient } from '../sdk/src/index.js';
import { uniqueWorkflowName } from '../test/resilience/support/workload.js';
import type { BenchEnvironment } from './environment.js';
import { endToEnd } from './exec.js';
import type { Plan } from './plan.js';
import type { BenchOutcome } from './report.js';
import { percentile, round } from './stats.js';
import { baselineTaskQueue, ensureTemporalBaseline } from './temporal-baseline.js';

type FairnessPlan = Plan['fairness'];

/** How long a flood may take to drain once started. */
const drainMinutes = 15;

export async function benchmarkFairness(
  env: BenchEnvironment,
  plan: FairnessPlan,
): Promise<BenchOutcome> {
  const quiet = await project(env, 'bench-quiet');
  const noisy = await project(env, 'bench-noisy');
  const limited = await project(env, 'bench-limited', { startsPerMinute: plan.limitedStarts });
  const oneTask = await addWorkflow(quiet, 'bench-quiet', [
    { name: 'Only', type: { plugin: 'Flow/NoOp' } },
  ]);
  const floodSteps = Array.from({ length: plan.floodTasks }, (_, index) => ({
    name: `Step${index + 1}`,
    type: { plugin: 'Flow/Delay' },
    parameters: { milliseconds: 0 },
    ...(index > 0 ? { dependencies: [`Step${index}`] } : {}),
  }));
  const noisyFlood = await addWorkflow(noisy, 'bench-flood', floodSteps);
  const limitedFlood = await addWorkflow(limited, 'bench-flood', floodSteps);
  const sameKeyFlood = await addWorkflow(quiet, 'bench-flood', floodSteps);

  // Warm both projects' paths (definitions cached, connections open) before measuring.
  for (let i = 0; i < 5; i++) await endToEnd(env, oneTask, quiet);
  const alone = await sample(() => endToEnd(env, oneTask, quiet), plan.samples);
  const quietRun = (patienceMs?: number) => endToEnd(env, oneTask, quiet, patienceMs);
  const underFlood = await whileFlooding(
    plan,
    trellisFlood(noisy, noisyFlood),
    () => activeRuns(env, noisyFlood),
    () => sample(quietRun, plan.samples),
  );
  // Measured once the limit holds the flood back (its first 429), until then the project starts
  // as fast as any; starts stop once measured (all of them would take floodRuns ÷ limitedStarts
  // minutes).
  let limitHolds: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (limitHolds = resolve));
  const underLimitedFlood = await whileFlooding(
    plan,
    politely(trellisFlood(limited, limitedFlood), () => limitHolds()),
    () => activeRuns(env, limitedFlood),
    () => sample(quietRun, plan.samples),
    { measureFrom: held, stopWhenMeasured: true },
  );
  // The control's first quiet run waits behind the whole backlog of its own key (the full plan's
  // 2,000 runs take minutes to drain), so it is given as long as the flood has to drain.
  const sameKey = await whileFlooding(
    plan,
    trellisFlood(quiet, sameKeyFlood),
    () => activeRuns(env, sameKeyFlood),
    () => sample(() => quietRun(drainMinutes * 60_000), plan.samples),
  );
  const peer = await temporalPeer(env, plan);

  const p = (values: number[], q: number) => round(percentile(values, q), 1);
  const quietP99 = p(alone.latencies, 99);
  const floodP99 = p(underFlood.result.latencies, 99);
  const sameKeyP99 = p(sameKey.result.latencies, 99);
  const results = {
    fair_quiet_p50_ms: p(alone.latencies, 50),
    fair_quiet_p99_ms: quietP99,
    fair_flood_p50_ms: p(underFlood.result.latencies, 50),
    fair_flood_p99_ms: floodP99,
    fair_p99_ratio: round(floodP99 / quietP99),
    // The name issue 31 gives the same figure.
    noisy_neighbour_p99_ratio: round(floodP99 / quietP99),
    fair_limited_flood_p50_ms: p(underLimitedFlood.result.latencies, 50),
    fair_limited_flood_p99_ms: p(underLimitedFlood.result.latencies, 99),
    fair_limited_p99_ratio: round(p(underLimitedFlood.result.latencies, 99) / quietP99),
    fair_same_key_p99_ms: sameKeyP99,
    fair_same_key_ratio: round(sameKeyP99 / quietP99),
    fair_temporal_quiet_p99_ms: p(peer.alone.latencies, 99),
    fair_temporal_flood_p99_ms: p(peer.underFlood.result.latencies, 99),
    fair_temporal_p99_ratio: round(
      percentile(peer.underFlood.result.latencies, 99) / percentile(peer.alone.latencies, 99),
    ),
  };
  const backlog = (phase: { backlogAtEnd: number }) => `${phase.backlogAtEnd} flood runs active`;
  return {
    results,
    rows: [
      {
        metric: `quiet project, one-task run p50/p99 (ms), another floods ${plan.floodRuns}×${plan.floodTasks}`,
        ours: `${results.fair_flood_p50_ms} / ${floodP99}`,
        baseline: `${results.fair_quiet_p50_ms} / ${quietP99} (no flood)`,
        ratio: String(results.fair_p99_ratio),
        target: 'p99 ≤ 2×',
      },
      {
        metric: 'the same, flood in the quiet project (one fairness key)',
        ours: `${p(sameKey.result.latencies, 50)} / ${sameKeyP99}`,
        baseline: `${results.fair_quiet_p50_ms} / ${quietP99} (no flood)`,
        ratio: String(results.fair_same_key_ratio),
        target: 'control',
      },
      {
        metric: 'peer: plain Temporal, the same flood, a fairness key each',
        ours: `${p(peer.underFlood.result.latencies, 50)} / ${results.fair_temporal_flood_p99_ms}`,
        baseline: `${p(peer.alone.latencies, 50)} / ${results.fair_temporal_quiet_p99_ms} (no flood)`,
        ratio: String(results.fair_temporal_p99_ratio),
        target: 'peer',
      },
    ],
    details: {
      plan,
      quiet: alone,
      flood: { ...underFlood.result, seconds: underFlood.seconds, backlog: backlog(underFlood) },
      sameKey: { ...sameKey.result, seconds: sameKey.seconds, backlog: backlog(sameKey) },
      temporal: {
        quiet: peer.alone,
        flood: {
          ...peer.underFlood.result,
          seconds: peer.underFlood.seconds,
          backlog: backlog(peer.underFlood),
        },
      },
    },
  };
}

/** A project of the benchmark, and the benchmark user's client in it. */
async function project(
  env: BenchEnvironment,
  name: string,
  limits?: { startsPerMinute: number },
): Promise<TrellisClient> {
  await env.admin.POST('/projects', { body: { name, ...(limits ? { limits } : {}) } });
  return createTrellisClient({
    baseUrl: env.apiUrl,
    basic: { username: env.user.username, password: env.user.password },
    project: name,
  });
}

async function addWorkflow(client: TrellisClient, prefix: string, tasks: unknown[]) {
  const definition = JSON.stringify({ name: uniqueWorkflowName(prefix), tasks });
  return (await client.POST('/workflows/Add', { body: { definition } })).id;
}

/** `count` runs one after another: each one's latency in ms. */
async function sample(run: () => Promise<number>, count: number): Promise<{ latencies: number[] }> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) latencies.push(await run());
  return { latencies };
}

/** Starts one flood run of a Trellis workflow. */
function trellisFlood(client: TrellisClient, workflowId: string) {
  return async () => {
    await client.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: { workflowId },
    });
  };
}

/**
 * A start as a client that honours `429` does: it waits the `Retry-After` the project's limit
 * names (`onLimited` is told), then tries again.
 */
function politely(startOne: () => Promise<void>, onLimited: () => void) {
  return async () => {
    for (;;) {
      try {
        return await startOne();
      } catch (error) {
        if (!(error instanceof TrellisApiError) || error.retryAfterSeconds === undefined)
          throw error;
        onLimited();
        await new Promise((resolve) => setTimeout(resolve, error.retryAfterSeconds! * 1000));
      }
    }
  };
}

/**
 * The peer: the baseline worker's workflows, a quiet one-local-activity run (fairness key
 * `bench-quiet`) alone and while `bookendedNoOps` runs of key `bench-noisy` flood.
 */
async function temporalPeer(env: BenchEnvironment, plan: FairnessPlan) {
  await ensureTemporalBaseline(env);
  const prefix = `bench-fair-${randomUUID()}`;
  const start = (workflow: string, fairnessKey: string, args: unknown[] = []) => ({
    taskQueue: baselineTaskQueue,
    workflowId: `${prefix}-${fairnessKey}-${randomUUID()}`,
    args,
    priority: { fairnessKey },
  });
  const quietRun = async () => {
    const began = performance.now();
    await env.temporal.workflow.execute('oneLocalNoOp', start('oneLocalNoOp', 'bench-quiet'));
    return performance.now() - began;
  };
  const flooding = new Set<string>();
  const failures: unknown[] = [];
  const floodRun = async () => {
    const handle = await env.temporal.workflow.start(
      'bookendedNoOps',
      start('bookendedNoOps', 'bench-noisy', [plan.floodTasks, 'regular']),
    );
    flooding.add(handle.workflowId);
    handle
      .result()
      .catch((error: unknown) => failures.push(error))
      .finally(() => flooding.delete(handle.workflowId));
  };
  for (let i = 0; i < 5; i++) await quietRun();
  const alone = await sample(quietRun, plan.samples);
  const underFlood = await whileFlooding(
    plan,
    floodRun,
    async () => flooding.size,
    () => sample(quietRun, plan.samples),
  );
  if (failures.length > 0)
    throw new Error(`${failures.length} flood runs failed`, { cause: failures[0] });
  return { alone, underFlood };
}

/**
 * Starts the flood (`plan.floodRuns` calls of `startOne`, `inFlight` at a time, or until measured
 * with `stopWhenMeasured`), runs `measure` once a tenth of it has started (a backlog has formed)
 * or `measureFrom` settles, then waits until `active` says every flood run has ended.
 */
async function whileFlooding<T>(
  plan: FairnessPlan,
  startOne: () => Promise<void>,
  active: () => Promise<number>,
  measure: () => Promise<T>,
  options: { measureFrom?: Promise<void>; stopWhenMeasured?: boolean } = {},
): Promise<{ result: T; seconds: number; backlogAtEnd: number }> {
  const began = performance.now();
  let started = 0;
  let measured = false;
  let reachedTenth: () => void = () => undefined;
  const tenth = new Promise<void>((resolve) => (reachedTenth = resolve));
  const starter = async () => {
    while (started < plan.floodRuns && !(options.stopWhenMeasured && measured)) {
      started += 1;
      await startOne();
      if (started >= plan.floodRuns / 10) reachedTenth();
    }
  };
  const flood = Promise.all(Array.from({ length: plan.inFlight }, starter));
  await (options.measureFrom ?? tenth);
  const result = await measure();
  measured = true;
  const backlogAtEnd = await active();
  await flood;
  while ((await active()) > 0) {
    if (performance.now() - began > drainMinutes * 60_000) {
      throw new Error(`The flood did not drain in ${drainMinutes} minutes`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { result, seconds: round((performance.now() - began) / 1000, 1), backlogAtEnd };
}

async function activeRuns(env: BenchEnvironment, workflowId: string): Promise<number> {
  const row = await env.db
    .selectFrom('workflowExecution')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('workflowId', '=', workflowId)
    .where('status', 'in', ['Pending', 'Running', 'Paused'])
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
