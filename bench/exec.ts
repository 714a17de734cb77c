/**
 * Completed executions per second, 50 in flight, started through the API and done when the
 * Temporal run completed, ÷ a plain Temporal workflow running the same shape the same way on
 * the same Temporal server with the same worker options (`baseline/workflows.ts`):
 * - `exec_ratio` / `exec_per_s`: a 3-task `Flow/NoOp` chain, whose quick plugin Trellis runs as
 *   local activities, against 3 local no-op activities in sequence;
 * - `exec_regular_ratio`: a 3-task `Flow/Delay` (0 ms) chain, regular activities in Trellis,
 *   against 3 regular no-op activities in sequence.
 * `tx_per_execution`: PostgreSQL transactions per 3-task `Flow/NoOp` execution (rows written
 * beside it). `exec_e2e_p50_ms` / `exec_e2e_p99_ms`: one single-task execution at a time, from
 * `POST` to `Completed` visible through `GET`, beside one local activity's workflow.
 *
 * The anatomy of those ratios (details and table, no keys): rungs of plain Temporal workflows
 * between each baseline and the Trellis run, each asking Temporal for more of what the run asks
 * (`measureAnatomy`), and for every round the CPU each part of the machine spent per execution
 * (`cpuByPart`): the Temporal server, PostgreSQL, the api, the worker, the baseline, the
 * benchmark itself.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { WorkflowStartOptions } from '@temporalio/client';
import { executionWorkflowId } from '#protocol/ids.js';
import {
  TrellisExecutionId,
  TrellisWorkflowId,
  TrellisWorkflowName,
} from '#protocol/search-attributes.js';
import { runDetails, runSummary } from '#protocol/user-metadata.js';
import { runConcurrently } from '../test/resilience/support/concurrency.js';
import {
  chainDefinition,
  uniqueWorkflowName,
  type Step,
} from '../test/resilience/support/workload.js';
import { cpuByPart, type PartMatcher } from './cpu.js';
import { databaseWork, rowsByTableLine } from './database-work.js';
import { startBenchEnvironment, type BenchEnvironment } from './environment.js';
import type { Plan } from './plan.js';
import type { BenchOutcome, TableRow } from './report.js';
import { baselineTaskQueue, ensureTemporalBaseline } from './temporal-baseline.js';
import { describeSummary, percentile, ratioSummary, round, summarize } from './stats.js';

/** A workflow of `baseline/workflows.ts`, its arguments, and whether it starts as a run does. */
interface BaselineRun {
  workflow: string;
  args?: unknown[];
  /** Started with the search attributes and summaries the API gives a run. */
  asARun?: boolean;
}

/**
 * A chain of tasks, the plain Temporal workflow that runs the same shape the same way, and the
 * rungs of its anatomy: plain Temporal workflows between the two, each asking Temporal for more
 * of what a Trellis run asks (`measureAnatomy`).
 */
interface Workload {
  label: string;
  steps: Step[];
  baseline: BaselineRun;
  target: string;
  rungs: { label: string; run: BaselineRun }[];
}

/** The rungs between a chain's baseline and the Trellis run of it. */
function rungsOf(tasks: number, kind: 'local' | 'regular'): Workload['rungs'] {
  return [
    {
      label: '+ a local activity before the tasks and one after (a run’s prepare and end)',
      run: { workflow: 'bookendedNoOps', args: [tasks, kind] },
    },
    {
      label: '+ a run’s start attributes and summaries, a patch, the status upserts',
      run: { workflow: 'trellisShapedNoOps', args: [tasks, kind], asARun: true },
    },
  ];
}

const workloads = {
  local: {
    label: '3-task Flow/NoOp chain exec/s (local activities)',
    steps: ['noop', 'noop', 'noop'],
    baseline: { workflow: 'threeLocalNoOps' },
    target: '≥ 0.85',
    rungs: rungsOf(3, 'local'),
  },
  regular: {
    label: '3-task Flow/Delay 0 ms chain exec/s (regular activities)',
    steps: [{ delayMs: 0 }, { delayMs: 0 }, { delayMs: 0 }],
    baseline: { workflow: 'threeNoOps' },
    target: '≥ 0.85',
    rungs: rungsOf(3, 'regular'),
  },
} satisfies Record<string, Workload>;

/** The single-task latency's rungs, as those of the local chain's rate. */
const latencyRungs = rungsOf(1, 'local');

export async function benchmarkExecutions(
  env: BenchEnvironment,
  plan: Plan['exec'],
): Promise<BenchOutcome> {
  await ensureTemporalBaseline(env);
  const single = await addWorkflow(env, ['noop']);
  const baseline = baselineStarter(env);
  const measuredRound = roundMeasurer(machineParts(env), plan.inFlight);
  const throughput = async (run: () => Promise<unknown>, count: number) =>
    (await measuredRound(run, count)).perSecond;

  const measured = {
    local: await measureWorkload(env, plan, workloads.local, baseline, measuredRound),
    regular: await measureWorkload(env, plan, workloads.regular, baseline, measuredRound),
  };
  const anatomy = {
    local: await measureAnatomy(
      plan,
      workloads.local,
      measured.local.runOurs,
      baseline,
      measuredRound,
    ),
    regular: await measureAnatomy(
      plan,
      workloads.regular,
      measured.regular.runOurs,
      baseline,
      measuredRound,
    ),
  };
  const sampled = Math.min(100, plan.executionsPerRound);
  const perExecution = await databaseWork(
    env,
    () => throughput(measured.local.runOurs, sampled),
    sampled,
  );
  await expectAllCompleted(
    env,
    measured.local.workflowId,
    measured.local.runs + anatomy.local.oursRuns + sampled,
  );
  await expectAllCompleted(
    env,
    measured.regular.workflowId,
    measured.regular.runs + anatomy.regular.oursRuns,
  );

  const latencies: number[] = [];
  const baselineLatencies: number[] = [];
  const rungLatencies = latencyRungs.map((): number[] => []);
  const timed = async (run: () => Promise<unknown>) => {
    const started = performance.now();
    await run();
    return performance.now() - started;
  };
  for (let index = 0; index < plan.latencySamples; index++) {
    latencies.push(await endToEnd(env, single));
    baselineLatencies.push(await timed(baseline({ workflow: 'oneLocalNoOp' })));
    for (const [rung, { run }] of latencyRungs.entries()) {
      rungLatencies[rung]!.push(await timed(baseline(run)));
    }
  }

  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  const baselineP50 = percentile(baselineLatencies, 50);
  const baselineP99 = percentile(baselineLatencies, 99);
  const { local, regular } = measured;
  return {
    results: {
      exec_ratio: round(local.ratio.median),
      exec_per_s: round(local.ours.median, 1),
      exec_regular_ratio: round(regular.ratio.median),
      exec_e2e_p50_ms: round(p50, 1),
      exec_e2e_p99_ms: round(p99, 1),
      tx_per_execution: round(perExecution.transactions, 1),
      exec_rows_per_execution: round(perExecution.rowsWritten, 1),
    },
    rows: [
      local.row,
      regular.row,
      {
        metric: 'DB transactions / rows written per 3-task execution',
        ours: `${round(perExecution.transactions, 1)} / ${round(perExecution.rowsWritten, 1)}`,
        baseline: '0 / 0',
        ratio: '',
        target: '≤ 4 transactions',
      },
      {
        metric: 'rows written per 3-task execution, by table',
        ours: rowsByTableLine(perExecution),
        baseline: '',
        ratio: '',
        target: '',
      },
      {
        metric: '1-task POST→Completed p50 / p99 ms (lower is better)',
        ours: `${round(p50, 1)} / ${round(p99, 1)}`,
        baseline: `${round(baselineP50, 1)} / ${round(baselineP99, 1)}`,
        ratio: round(p50 / baselineP50).toString(),
        target: 'p50 ≤ 1.15',
      },
      ...anatomy.local.rows,
      ...anatomy.regular.rows,
      ...latencyRungs.map((rung, index) => {
        const rungP50 = percentile(rungLatencies[index]!, 50);
        return {
          metric: `anatomy (oneLocalNoOp): 1-task p50 / p99 ms, ${rung.label}`,
          ours: `${round(rungP50, 1)} / ${round(percentile(rungLatencies[index]!, 99), 1)}`,
          baseline: `${round(baselineP50, 1)} / ${round(baselineP99, 1)}`,
          ratio: round(rungP50 / baselineP50).toString(),
          target: '',
        };
      }),
    ],
    details: {
      inFlight: plan.inFlight,
      executionsPerRound: plan.executionsPerRound,
      perSecond: {
        local: { ours: local.ours, baseline: local.baseline, ratio: local.ratio },
        regular: { ours: regular.ours, baseline: regular.baseline, ratio: regular.ratio },
      },
      cpuMicrosPerExecution: {
        note: 'CPU µs per execution by part of the machine, median over rounds (/proc; `all` is the machine busy time)',
        local: { ours: local.cpu.ours, baseline: local.cpu.baseline },
        regular: { ours: regular.cpu.ours, baseline: regular.cpu.baseline },
      },
      anatomy: {
        local: anatomy.local.details,
        regular: anatomy.regular.details,
        latencyMs: latencyRungs.map((rung, index) => ({
          ...rung,
          p50: percentile(rungLatencies[index]!, 50),
          p99: percentile(rungLatencies[index]!, 99),
        })),
      },
      databaseWorkPerExecution: perExecution,
      sideBySide: {
        trellis: {
          perSecond: local.ours.median,
          p50,
          p99,
          cpuMicros: partsOf(local.cpu.ours, ['temporal', 'postgres', 'api', 'worker']),
        },
        temporal: {
          perSecond: local.baseline.median,
          p50: baselineP50,
          p99: baselineP99,
          cpuMicros: partsOf(local.cpu.baseline, ['temporal', 'baseline']),
        },
      } satisfies Record<string, ChainFigures>,
      latencyMs: {
        samples: plan.latencySamples,
        ours: { p50, p90: percentile(latencies, 90), p99, max: Math.max(...latencies) },
        baseline: { p50: baselineP50, p99: baselineP99 },
        note: 'ours polls GET every 5 ms until Completed; the baseline (one local activity) waits for the workflow result',
      },
    },
  };
}

/**
 * What the peers benchmark sets beside each peer: the 3-task chain's executions/s (50 in
 * flight), the 1-task latency, and the CPU per 3-task execution of the processes that ran it.
 */
export interface ChainFigures {
  perSecond: number;
  p50: number;
  p99: number;
  /** µs per execution, by process. */
  cpuMicros: Record<string, number>;
}

function partsOf(cpu: Record<string, number>, parts: string[]): Record<string, number> {
  return Object.fromEntries(parts.map((part) => [part, cpu[part] ?? 0]));
}

/** One round of one side: executions per second, and CPU µs per execution by part. */
export interface Round {
  perSecond: number;
  cpu: Record<string, number>;
}

export type MeasuredRound = (run: () => Promise<unknown>, count: number) => Promise<Round>;

/** One workload's rounds: ours and its baseline back to back, alternating which goes first. */
async function measureWorkload(
  env: BenchEnvironment,
  plan: Plan['exec'],
  workload: Workload,
  baseline: StartBaseline,
  measuredRound: MeasuredRound,
) {
  const workflowId = await addWorkflow(env, workload.steps);
  const runOurs = async () => {
    const started = await env.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: { workflowId },
    });
    await env.temporal.workflow.getHandle(executionWorkflowId(started.executionId)).result();
    return started.executionId;
  };
  const runBaseline = baseline(workload.baseline);
  const warmup = Math.min(plan.inFlight, plan.executionsPerRound);
  await measuredRound(runBaseline, warmup);
  await measuredRound(runOurs, warmup);
  const oursRounds: Round[] = [];
  const baselineRounds: Round[] = [];
  for (let index = 0; index < plan.rounds; index++) {
    const order =
      index % 2 === 0 ? (['baseline', 'ours'] as const) : (['ours', 'baseline'] as const);
    for (const side of order) {
      if (side === 'ours') oursRounds.push(await measuredRound(runOurs, plan.executionsPerRound));
      else baselineRounds.push(await measuredRound(runBaseline, plan.executionsPerRound));
    }
  }
  const ours = summarize(oursRounds.map((round) => round.perSecond));
  const baselineSummary = summarize(baselineRounds.map((round) => round.perSecond));
  const ratio = ratioSummary(
    oursRounds.map((round) => round.perSecond),
    baselineRounds.map((round) => round.perSecond),
  );
  const row: TableRow = {
    metric: `${workload.label} (${plan.inFlight} in flight)`,
    ours: describeSummary(ours, 1),
    baseline: describeSummary(baselineSummary, 1),
    ratio: describeSummary(ratio),
    target: workload.target,
  };
  return {
    workflowId,
    runOurs,
    runs: warmup + plan.rounds * plan.executionsPerRound,
    ours,
    baseline: baselineSummary,
    ratio,
    cpu: { ours: medianCpu(oursRounds), baseline: medianCpu(baselineRounds) },
    row,
  };
}

/** Starts a baseline workflow and waits for its result. */
type StartBaseline = (run: BaselineRun) => () => Promise<unknown>;

function baselineStarter(env: BenchEnvironment): StartBaseline {
  return ({ workflow, args = [], asARun = false }) =>
    () =>
      env.temporal.workflow.execute(workflow, {
        taskQueue: baselineTaskQueue,
        workflowId: `bench-baseline-${randomUUID()}`,
        args,
        ...(asARun ? startedAsARun() : {}),
      });
}

/**
 * Completed executions per second over `count` runs, `inFlight` at a time, and the CPU each
 * part of the machine spent per execution meanwhile.
 */
export function roundMeasurer(parts: Record<string, PartMatcher>, inFlight: number): MeasuredRound {
  return async (run, count) => {
    const cpuBefore = await cpuByPart(parts);
    const started = performance.now();
    await runConcurrently(count, inFlight, run);
    const perSecond = count / ((performance.now() - started) / 1000);
    const cpuAfter = await cpuByPart(parts);
    const cpu = Object.fromEntries(
      Object.keys(cpuAfter).map((part) => [part, (cpuAfter[part]! - cpuBefore[part]!) / count]),
    );
    return { perSecond, cpu };
  };
}

/**
 * `cluster_exec_per_s` / `cluster_exec_ratio`: the 3-task `Flow/NoOp` chain's rate and ratio
 * (as `exec_*`) on a real Temporal cluster, its services separate processes on PostgreSQL, in an
 * environment of its own (`startBenchEnvironment({ temporal: 'cluster' })`).
 */
export async function benchmarkClusterExecutions(plan: Plan['exec']): Promise<BenchOutcome> {
  const env = await startBenchEnvironment({ temporal: 'cluster' });
  try {
    await ensureTemporalBaseline(env);
    const local = await measureWorkload(
      env,
      plan,
      workloads.local,
      baselineStarter(env),
      roundMeasurer(machineParts(env), plan.inFlight),
    );
    await expectAllCompleted(env, local.workflowId, local.runs);
    return {
      results: {
        cluster_exec_per_s: round(local.ours.median, 1),
        cluster_exec_ratio: round(local.ratio.median),
      },
      rows: [{ ...local.row, metric: `${local.row.metric}, on a Temporal cluster` }],
      details: {
        perSecond: { ours: local.ours, baseline: local.baseline, ratio: local.ratio },
        cpuMicrosPerExecution: local.cpu,
      },
    };
  } finally {
    await env.stop();
  }
}

/**
 * The anatomy of a workload's ratio: the baseline, its rungs (plain Temporal workflows asking
 * Temporal for more of what a Trellis run asks, the last one all of it, with no-op activities),
 * then Trellis. All run in every round, in an order that rotates; each gets its rate ÷ the
 * baseline's of the same round, and the CPU each part of the machine spent per execution.
 */
async function measureAnatomy(
  plan: Plan['exec'],
  workload: Workload,
  runOurs: () => Promise<unknown>,
  baseline: StartBaseline,
  measuredRound: MeasuredRound,
) {
  const sides = [
    {
      label: `plain Temporal: ${workload.baseline.workflow} (the baseline)`,
      run: baseline(workload.baseline),
    },
    ...workload.rungs.map((rung) => ({ label: rung.label, run: baseline(rung.run) })),
    { label: 'Trellis: + the API, the database writes, the engine', run: runOurs },
  ];
  const rounds = sides.map((): Round[] => []);
  const warmup = Math.min(plan.inFlight, plan.executionsPerRound);
  for (const side of sides.slice(1, -1)) await measuredRound(side.run, warmup);
  for (let index = 0; index < plan.rounds; index++) {
    for (let step = 0; step < sides.length; step++) {
      const at = (index + step) % sides.length;
      rounds[at]!.push(await measuredRound(sides[at]!.run, plan.executionsPerRound));
    }
  }
  const base = rounds[0]!.map((round) => round.perSecond);
  const details = sides.map(({ label }, index) => {
    const perSecond = rounds[index]!.map((round) => round.perSecond);
    return {
      label,
      perSecond: summarize(perSecond),
      ratio: ratioSummary(perSecond, base),
      cpuMicrosPerExecution: medianCpu(rounds[index]!),
    };
  });
  const rows: TableRow[] = details.map((side) => ({
    metric: `anatomy (${workload.baseline.workflow}): ${side.label}`,
    ours: describeSummary(side.perSecond, 1),
    baseline: cpuLine(side.cpuMicrosPerExecution),
    ratio: describeSummary(side.ratio),
    target: '',
  }));
  return { details, rows, oursRuns: plan.rounds * plan.executionsPerRound };
}

/** The options the API starts a run with, for a baseline started as a run. */
function startedAsARun(): Pick<
  WorkflowStartOptions,
  'typedSearchAttributes' | 'staticSummary' | 'staticDetails'
> {
  const ids = {
    workflowId: randomUUID(),
    workflowName: 'bench-exec-anatomy',
    executionId: randomUUID(),
  };
  return {
    typedSearchAttributes: [
      { key: TrellisWorkflowId, value: ids.workflowId },
      { key: TrellisWorkflowName, value: ids.workflowName },
      { key: TrellisExecutionId, value: ids.executionId },
    ],
    staticSummary: runSummary(ids.workflowName),
    staticDetails: runDetails(ids),
  };
}

/** Per part of the machine, the median over rounds of its CPU µs per execution. */
export function medianCpu(rounds: Round[]): Record<string, number> {
  const parts = Object.keys(rounds[0]?.cpu ?? {});
  return Object.fromEntries(
    parts.map((part) => [
      part,
      round(
        percentile(
          rounds.map((r) => r.cpu[part]!),
          50,
        ),
        0,
      ),
    ]),
  );
}

/** `temporal 1200 · postgres 300 · …` µs per execution, the larger parts first. */
export function cpuLine(cpu: Record<string, number>): string {
  return Object.entries(cpu)
    .filter(([part, micros]) => part !== 'all' && micros >= 50)
    .sort((a, b) => b[1] - a[1])
    .map(([part, micros]) => `${part} ${micros}`)
    .concat(`(all ${cpu.all} µs)`)
    .join(' · ');
}

/**
 * The parts of the machine whose CPU an execution uses: Temporal (the dev server or the cluster's services), the PostgreSQL
 * cluster (postmaster and backends), Trellis' api and worker, each baseline process, and the
 * benchmark itself (its Temporal client and HTTP calls).
 */
export function machineParts(env: BenchEnvironment): Record<string, PartMatcher> {
  const postgresPort = new URL(env.databaseUrl).port || '5432';
  const after = (argv: string[], flag: string) => argv[argv.indexOf(flag) + 1];
  return {
    temporal: env.isTemporal,
    postgres: ({ command, argv }) => command === 'postgres' && after(argv, '-p') === postgresPort,
    api: ({ pid }) => pid === env.api.pid,
    worker: ({ pid }) => pid === env.worker.pid,
    baseline: ({ pid }) => pid !== env.api.pid && pid !== env.worker.pid && pid in env.roles,
    bench: ({ pid }) => pid === process.pid,
  };
}

async function addWorkflow(env: BenchEnvironment, steps: Step[]): Promise<string> {
  const created = await env.admin.POST('/workflows/Add', {
    body: {
      definition: JSON.stringify(chainDefinition(uniqueWorkflowName('bench-exec'), steps)),
    },
  });
  return created.id;
}

/**
 * Milliseconds from `POST .../executions` until `GET` shows the execution Completed (through
 * `client`, by default the admin's in its default project). A run still going after
 * `patienceMs` counts as hung.
 */
export async function endToEnd(
  env: BenchEnvironment,
  workflowId: string,
  client = env.admin,
  patienceMs = 60_000,
): Promise<number> {
  const started = performance.now();
  const { executionId } = await client.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
    body: { workflowId },
  });
  // Polls every 5 ms, as this metric always has (the SDK's waitForExecution now follows the event
  // stream, which would measure something else).
  let finished: { status: string };
  for (;;) {
    finished = await client.GET('/workflows/{workflowId}/executions/{executionId}', {
      params: { path: { workflowId, executionId } },
    });
    if (['Completed', 'Failed', 'Canceled'].includes(finished.status)) break;
    if (performance.now() - started > patienceMs) {
      throw new Error(
        `Execution ${executionId} hangs: not ended ${patienceMs / 1000} s after its start`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  if (finished.status !== 'Completed')
    throw new Error(`Execution ${executionId} ${finished.status}`);
  return performance.now() - started;
}

/** Every run the benchmark counted must be Completed in the database, not just in Temporal. */
async function expectAllCompleted(env: BenchEnvironment, workflowId: string, expected: number) {
  const rows = await env.db
    .selectFrom('workflowExecution')
    .select(['status', (eb) => eb.fn.countAll<string>().as('count')])
    .where('workflowId', '=', workflowId)
    .groupBy('status')
    .execute();
  const completed = Number(rows.find((row) => row.status === 'Completed')?.count ?? 0);
  if (completed !== expected) {
    throw new Error(`Expected ${expected} Completed executions, found ${JSON.stringify(rows)}`);
  }
}
