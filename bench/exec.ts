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
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { executionWorkflowId } from '../core/src/temporal/ids.js';
import { runConcurrently } from '../test/resilience/support/concurrency.js';
import {
  chainDefinition,
  uniqueWorkflowName,
  type Step,
} from '../test/resilience/support/workload.js';
import type { BenchEnvironment } from './environment.js';
import type { Plan } from './plan.js';
import type { BenchOutcome, TableRow } from './report.js';
import { baselineTaskQueue, ensureTemporalBaseline } from './temporal-baseline.js';
import { describeSummary, percentile, ratioSummary, round, summarize } from './stats.js';

/** A chain of tasks, and the plain Temporal workflow that runs the same shape the same way. */
interface Workload {
  label: string;
  steps: Step[];
  baselineWorkflow: 'threeLocalNoOps' | 'threeNoOps';
  target: string;
}

const workloads = {
  local: {
    label: '3-task Flow/NoOp chain exec/s (local activities)',
    steps: ['noop', 'noop', 'noop'],
    baselineWorkflow: 'threeLocalNoOps',
    target: '≥ 0.85',
  },
  regular: {
    label: '3-task Flow/Delay 0 ms chain exec/s (regular activities)',
    steps: [{ delayMs: 0 }, { delayMs: 0 }, { delayMs: 0 }],
    baselineWorkflow: 'threeNoOps',
    target: '≥ 0.85',
  },
} satisfies Record<string, Workload>;

export async function benchmarkExecutions(
  env: BenchEnvironment,
  plan: Plan['exec'],
): Promise<BenchOutcome> {
  await ensureTemporalBaseline(env);
  const single = await addWorkflow(env, ['noop']);
  const baseline = (workflow: string) => () =>
    env.temporal.workflow.execute(workflow, {
      taskQueue: baselineTaskQueue,
      workflowId: `bench-baseline-${randomUUID()}`,
    });
  /** Completed executions per second over `count` runs, `inFlight` at a time. */
  const throughput = async (run: () => Promise<unknown>, count: number) => {
    const started = performance.now();
    await runConcurrently(count, plan.inFlight, run);
    return count / ((performance.now() - started) / 1000);
  };

  const measured = {
    local: await measureWorkload(env, plan, workloads.local, baseline, throughput),
    regular: await measureWorkload(env, plan, workloads.regular, baseline, throughput),
  };
  const sampled = Math.min(100, plan.executionsPerRound);
  const databaseWork = await databaseWorkPerExecution(
    env,
    () => throughput(measured.local.runOurs, sampled),
    sampled,
  );
  await expectAllCompleted(env, measured.local.workflowId, measured.local.runs + sampled);
  await expectAllCompleted(env, measured.regular.workflowId, measured.regular.runs);

  const latencies: number[] = [];
  const baselineLatencies: number[] = [];
  for (let index = 0; index < plan.latencySamples; index++) {
    latencies.push(await endToEnd(env, single));
    const started = performance.now();
    await baseline('oneLocalNoOp')();
    baselineLatencies.push(performance.now() - started);
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
      tx_per_execution: round(databaseWork.transactions, 1),
    },
    rows: [
      local.row,
      regular.row,
      {
        metric: 'DB transactions / rows written per 3-task execution',
        ours: `${round(databaseWork.transactions, 1)} / ${round(databaseWork.rowsWritten, 1)}`,
        baseline: '0 / 0',
        ratio: '',
        target: '≤ 4 transactions',
      },
      {
        metric: '1-task POST→Completed p50 / p99 ms (lower is better)',
        ours: `${round(p50, 1)} / ${round(p99, 1)}`,
        baseline: `${round(baselineP50, 1)} / ${round(baselineP99, 1)}`,
        ratio: round(p50 / baselineP50).toString(),
        target: 'p50 ≤ 1.15',
      },
    ],
    details: {
      inFlight: plan.inFlight,
      executionsPerRound: plan.executionsPerRound,
      perSecond: {
        local: { ours: local.ours, baseline: local.baseline, ratio: local.ratio },
        regular: { ours: regular.ours, baseline: regular.baseline, ratio: regular.ratio },
      },
      databaseWorkPerExecution: databaseWork,
      latencyMs: {
        samples: plan.latencySamples,
        ours: { p50, p90: percentile(latencies, 90), p99, max: Math.max(...latencies) },
        baseline: { p50: baselineP50, p99: baselineP99 },
        note: 'ours polls GET every 5 ms until Completed; the baseline (one local activity) waits for the workflow result',
      },
    },
  };
}

/** One workload's rounds: ours and its baseline back to back, alternating which goes first. */
async function measureWorkload(
  env: BenchEnvironment,
  plan: Plan['exec'],
  workload: Workload,
  baseline: (workflow: string) => () => Promise<unknown>,
  throughput: (run: () => Promise<unknown>, count: number) => Promise<number>,
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
  const runBaseline = baseline(workload.baselineWorkflow);
  const warmup = Math.min(plan.inFlight, plan.executionsPerRound);
  await throughput(runBaseline, warmup);
  await throughput(runOurs, warmup);
  const oursRounds: number[] = [];
  const baselineRounds: number[] = [];
  for (let index = 0; index < plan.rounds; index++) {
    const order =
      index % 2 === 0 ? (['baseline', 'ours'] as const) : (['ours', 'baseline'] as const);
    for (const side of order) {
      if (side === 'ours') oursRounds.push(await throughput(runOurs, plan.executionsPerRound));
      else baselineRounds.push(await throughput(runBaseline, plan.executionsPerRound));
    }
  }
  const ours = summarize(oursRounds);
  const baselineSummary = summarize(baselineRounds);
  const ratio = ratioSummary(oursRounds, baselineRounds);
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
    row,
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

/** Milliseconds from `POST .../executions` until `GET` shows the execution Completed. */
async function endToEnd(env: BenchEnvironment, workflowId: string): Promise<number> {
  const started = performance.now();
  const { executionId } = await env.admin.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
    body: { workflowId },
  });
  // Polls every 5 ms, as this metric always has (the SDK's waitForExecution now follows the event
  // stream, which would measure something else).
  let finished: { status: string };
  for (;;) {
    finished = await env.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
      params: { path: { workflowId, executionId } },
    });
    if (['Completed', 'Failed', 'Canceled'].includes(finished.status)) break;
    if (performance.now() - started > 60_000) throw new Error(`Execution ${executionId} hangs`);
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

/**
 * PostgreSQL's own counters around `count` executions: transactions (each autocommit statement
 * is one; every one is a round trip) and rows written, per execution. PostgreSQL publishes a
 * backend's counters up to 10 s late when it goes idle, hence the waits.
 */
async function databaseWorkPerExecution(
  env: BenchEnvironment,
  run: () => Promise<unknown>,
  count: number,
): Promise<{ transactions: number; rowsWritten: number }> {
  const counters = async () => {
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    const { rows } = await sql<{ transactions: string; written: string }>`
      select xact_commit + xact_rollback as transactions,
             tup_inserted + tup_updated + tup_deleted as written
      from pg_stat_database where datname = current_database()`.execute(env.db);
    return { transactions: Number(rows[0]!.transactions), written: Number(rows[0]!.written) };
  };
  const before = await counters();
  await run();
  const after = await counters();
  return {
    // Minus the first counters query, which commits after it has read the counters.
    transactions: (after.transactions - before.transactions - 1) / count,
    rowsWritten: (after.written - before.written) / count,
  };
}
