/**
 * `exec_ratio` / `exec_per_s`: completed executions per second of a 3-task `Flow/NoOp` chain,
 * 50 in flight, started through the API ÷ a plain Temporal workflow running 3 no-op activities
 * in sequence on the same Temporal server with the same worker options.
 * `exec_e2e_p50_ms` / `exec_e2e_p99_ms`: one single-task execution at a time, from `POST` to
 * `Completed` visible through `GET`.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { executionWorkflowId } from '../core/src/temporal/ids.js';
import { runConcurrently } from '../test/resilience/support/concurrency.js';
import { chainDefinition, uniqueWorkflowName } from '../test/resilience/support/workload.js';
import type { BenchEnvironment } from './environment.js';
import type { Plan } from './plan.js';
import type { BenchOutcome } from './report.js';
import { baselineTaskQueue, ensureTemporalBaseline } from './temporal-baseline.js';
import { describeSummary, percentile, ratioSummary, round, summarize } from './stats.js';

export async function benchmarkExecutions(
  env: BenchEnvironment,
  plan: Plan['exec'],
): Promise<BenchOutcome> {
  await ensureTemporalBaseline(env);
  const chain = await addWorkflow(env, ['noop', 'noop', 'noop']);
  const single = await addWorkflow(env, ['noop']);

  const ours = async () => {
    const started = await env.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId: chain } },
      body: { workflowId: chain },
    });
    await env.temporal.workflow.getHandle(executionWorkflowId(started.executionId)).result();
    return started.executionId;
  };
  const baseline = (workflow: 'threeNoOps' | 'oneNoOp') => () =>
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

  const warmup = Math.min(plan.inFlight, plan.executionsPerRound);
  await throughput(baseline('threeNoOps'), warmup);
  await throughput(ours, warmup);
  const oursRounds: number[] = [];
  const baselineRounds: number[] = [];
  for (let index = 0; index < plan.rounds; index++) {
    const order =
      index % 2 === 0 ? (['baseline', 'ours'] as const) : (['ours', 'baseline'] as const);
    for (const side of order) {
      if (side === 'ours') oursRounds.push(await throughput(ours, plan.executionsPerRound));
      else baselineRounds.push(await throughput(baseline('threeNoOps'), plan.executionsPerRound));
    }
  }
  const sampled = Math.min(100, plan.executionsPerRound);
  const databaseWork = await databaseWorkPerExecution(
    env,
    () => throughput(ours, sampled),
    sampled,
  );
  await expectAllCompleted(env, chain, warmup + plan.rounds * plan.executionsPerRound + sampled);

  const latencies: number[] = [];
  const baselineLatencies: number[] = [];
  for (let index = 0; index < plan.latencySamples; index++) {
    latencies.push(await endToEnd(env, single));
    const started = performance.now();
    await baseline('oneNoOp')();
    baselineLatencies.push(performance.now() - started);
  }

  const oursSummary = summarize(oursRounds);
  const baselineSummary = summarize(baselineRounds);
  const ratio = ratioSummary(oursRounds, baselineRounds);
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  const baselineP50 = percentile(baselineLatencies, 50);
  return {
    results: {
      exec_ratio: round(ratio.median),
      exec_per_s: round(oursSummary.median, 1),
      exec_e2e_p50_ms: round(p50, 1),
      exec_e2e_p99_ms: round(p99, 1),
    },
    rows: [
      {
        metric: `3-task chain exec/s (${plan.inFlight} in flight)`,
        ours: describeSummary(oursSummary, 1),
        baseline: describeSummary(baselineSummary, 1),
        ratio: describeSummary(ratio),
        target: '≥ 0.70',
      },
      {
        metric: 'DB transactions / rows written per 3-task execution',
        ours: `${round(databaseWork.transactions, 1)} / ${round(databaseWork.rowsWritten, 1)}`,
        baseline: '0 / 0',
        ratio: '',
        target: '',
      },
      {
        metric: '1-task POST→Completed p50 / p99 ms',
        ours: `${round(p50, 1)} / ${round(p99, 1)}`,
        baseline: `${round(baselineP50, 1)} / ${round(percentile(baselineLatencies, 99), 1)}`,
        ratio: round(p50 / baselineP50).toString(),
        target: '',
      },
    ],
    details: {
      inFlight: plan.inFlight,
      executionsPerRound: plan.executionsPerRound,
      perSecond: { ours: oursSummary, baseline: baselineSummary, ratio },
      databaseWorkPerExecution: databaseWork,
      latencyMs: {
        samples: plan.latencySamples,
        ours: { p50, p90: percentile(latencies, 90), p99, max: Math.max(...latencies) },
        baseline: { p50: baselineP50, p99: percentile(baselineLatencies, 99) },
        note: 'ours polls GET every 5 ms until Completed; the baseline waits for the workflow result',
      },
    },
  };
}

async function addWorkflow(env: BenchEnvironment, steps: 'noop'[]): Promise<string> {
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
