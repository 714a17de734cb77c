/**
 * `dag_2000_s`: a 2,000-task DAG (20 layers × 100 wide of `Flow/NoOp`, degreeOfParallelism 100)
 * from `POST .../executions` until it completes; `dag_overhead_ms_per_task` is that time per
 * task (the tasks do nothing, so all of it is the engine's); `dag_history_events` is the length
 * of its Temporal history, which must stay far below Temporal's limits (51,200 events, 50 MB).
 * The baseline row is plain Temporal running 2,000 no-op local activities (Trellis runs the
 * quick `Flow/NoOp` as local activities) 100 at a time.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { executionWorkflowId } from '#protocol/ids.js';
import { uniqueWorkflowName } from '../test/resilience/support/workload.js';
import type { BenchEnvironment } from './environment.js';
import type { Plan } from './plan.js';
import type { BenchOutcome } from './report.js';
import { baselineTaskQueue, ensureTemporalBaseline } from './temporal-baseline.js';
import { describeSummary, ratioSummary, round, summarize } from './stats.js';

/**
 * Layer `l` task `i` depends on tasks `i` and `i + 1` (wrapping) of layer `l - 1`: every layer
 * waits for the one before, without a definition of 190,000 edges.
 */
export function layeredDefinition(plan: Plan['dag']): string {
  const name = (layer: number, index: number) => `L${layer}-T${index}`;
  const tasks = [];
  for (let layer = 1; layer <= plan.layers; layer++) {
    for (let index = 0; index < plan.width; index++) {
      tasks.push({
        name: name(layer, index),
        type: { plugin: 'Flow/NoOp' },
        ...(layer > 1
          ? {
              dependencies: [name(layer - 1, index), name(layer - 1, (index + 1) % plan.width)],
            }
          : {}),
      });
    }
  }
  return JSON.stringify({
    name: uniqueWorkflowName('bench-dag'),
    configuration: { degreeOfParallelism: plan.parallelism },
    tasks,
  });
}

/** One execution of a stored workflow, started through the API: seconds until its run completes. */
export async function timedRun(env: BenchEnvironment, workflowId: string) {
  const started = performance.now();
  const { executionId } = await env.admin.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
    body: { workflowId },
  });
  const handle = env.temporal.workflow.getHandle(executionWorkflowId(executionId));
  await handle.result();
  return { executionId, handle, seconds: (performance.now() - started) / 1000 };
}

/**
 * The floor plain Temporal sets for `tasks` quick tasks: as many local no-op activities,
 * `parallelism` at a time, in one workflow (`manyLocalNoOps`). Seconds.
 */
export async function timedLocalNoOps(
  env: BenchEnvironment,
  label: string,
  tasks: number,
  parallelism: number,
): Promise<number> {
  const started = performance.now();
  await env.temporal.workflow.execute('manyLocalNoOps', {
    taskQueue: baselineTaskQueue,
    workflowId: `bench-baseline-${label}-${randomUUID()}`,
    args: [tasks, parallelism],
  });
  return (performance.now() - started) / 1000;
}

/** One DAG of `plan`'s shape run `plan.rounds` times, each beside the plain-Temporal baseline. */
async function measureDag(env: BenchEnvironment, plan: Plan['dag']) {
  const taskCount = plan.layers * plan.width;
  await ensureTemporalBaseline(env);
  const { id: workflowId } = await env.admin.POST('/workflows/Add', {
    body: { definition: layeredDefinition(plan) },
  });

  const seconds: number[] = [];
  const baselineSeconds: number[] = [];
  const histories: number[] = [];
  const historyBytes: number[] = [];
  const runs: { runId: string; status: string; historyLength: number }[] = [];
  for (let index = 0; index < plan.rounds; index++) {
    const { executionId, handle, seconds: took } = await timedRun(env, workflowId);
    seconds.push(took);
    await expectTasksCompleted(env, executionId, taskCount);
    const description = await handle.describe();
    histories.push(description.historyLength);
    historyBytes.push(Number(description.raw.workflowExecutionInfo?.historySizeBytes ?? 0));
    // Every Temporal run the execution had (one, unless something ended the first early).
    for await (const run of env.temporal.workflow.list({
      query: `WorkflowId = '${executionWorkflowId(executionId)}'`,
    })) {
      runs.push({ runId: run.runId, status: run.status.name, historyLength: run.historyLength });
    }

    baselineSeconds.push(await timedLocalNoOps(env, 'dag', taskCount, plan.parallelism));
  }
  const ours = summarize(seconds);
  const baseline = summarize(baselineSeconds);
  const rows = [
    {
      metric: `${taskCount}-task DAG seconds (lower is better)`,
      ours: describeSummary(ours, 1),
      baseline: describeSummary(baseline, 1),
      ratio: describeSummary(ratioSummary(seconds, baselineSeconds)),
      target: 'completes',
    },
    {
      metric: `${taskCount}-task DAG history events / size`,
      ours: `${Math.max(...histories)} / ${round(Math.max(...historyBytes) / 1024, 0)} KiB`,
      baseline: '',
      ratio: '',
      target: '< 51,200 / 50 MiB',
    },
  ];
  const details = {
    shape: `${plan.layers} layers × ${plan.width} wide, 2 dependencies per task, degreeOfParallelism ${plan.parallelism}`,
    seconds: ours,
    baselineSeconds: baseline,
    historyEvents: histories,
    historyBytes,
    runs,
  };
  return { taskCount, ours, histories, rows, details, seconds, baselineSeconds };
}

export async function benchmarkDag(
  env: BenchEnvironment,
  plan: Plan['dag'],
): Promise<BenchOutcome> {
  const { taskCount, ours, histories, rows, details } = await measureDag(env, plan);
  return {
    results: {
      dag_2000_s: round(ours.median, 1),
      dag_overhead_ms_per_task: round((ours.median * 1000) / taskCount),
      dag_history_events: Math.max(...histories),
    },
    rows,
    details,
  };
}

/**
 * `dag_10000_s`: the same shape at 10,000 tasks (100 layers × 100 wide), in one run of the
 * workflow (no continue-as-new), with its ratio to plain Temporal's 10,000 local no-ops and its
 * history (`dag_10000_history_events`).
 */
export async function benchmarkDag10k(
  env: BenchEnvironment,
  plan: Plan['dag10k'],
): Promise<BenchOutcome> {
  const { ours, histories, rows, details, seconds, baselineSeconds } = await measureDag(env, plan);
  return {
    results: {
      dag_10000_s: round(ours.median, 1),
      dag_10000_ratio: round(ratioSummary(seconds, baselineSeconds).median, 2),
      dag_10000_history_events: Math.max(...histories),
    },
    rows,
    details,
  };
}

async function expectTasksCompleted(env: BenchEnvironment, executionId: string, expected: number) {
  const row = await env.db
    .selectFrom('taskExecution')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('executionId', '=', executionId)
    .where('status', '=', 'Completed')
    .executeTakeFirstOrThrow();
  if (Number(row.count) !== expected) {
    throw new Error(`DAG execution ${executionId}: ${row.count} of ${expected} tasks Completed`);
  }
}
