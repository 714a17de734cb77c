/**
 * `foreach_10000_s`: one forEach task over 10,000 items (`Flow/NoOp`, 100 at once) from
 * `POST .../executions` until the run completes; `foreach_history_events` is the length of the
 * run's own Temporal history and `foreach_chunk_history_events` the longest of its chunks'
 * (README, "foreach"), both to stay far below Temporal's limits (51,200 events, 50 MB). The time
 * baseline is plain Temporal running as many local no-op activities (Trellis runs the quick
 * `Flow/NoOp` so) 100 at a time; beside the histories, as many regular no-op activities in one
 * workflow, 100 at a time and one at a time: what the items would cost the run's workflow
 * without chunks.
 */
import { randomUUID } from 'node:crypto';
import { uniqueWorkflowName } from '../test/resilience/support/workload.js';
import { itemChunks } from '../workflows-worker/src/workflows/foreach-plan.js';
import { forEachChunkWorkflowId } from '../workflows-worker/src/workflows/foreach.js';
import { timedLocalNoOps, timedRun } from './dag.js';
import type { BenchEnvironment } from './environment.js';
import type { Plan } from './plan.js';
import type { BenchOutcome } from './report.js';
import { describeSummary, ratioSummary, round, summarize } from './stats.js';
import { baselineTaskQueue, ensureTemporalBaseline } from './temporal-baseline.js';

function forEachDefinition(plan: Plan['foreach']): string {
  return JSON.stringify({
    name: uniqueWorkflowName('bench-foreach'),
    configuration: { degreeOfParallelism: plan.parallelism },
    variables: { items: range(plan.items) },
    tasks: [
      {
        name: 'Each',
        type: { plugin: 'Flow/NoOp' },
        forEach: {
          items: "Variables('items')",
          parallelism: plan.parallelism,
        },
        parameters: { item: '$[Item()]', index: '$[Index()]' },
      },
    ],
  });
}

/** How many items the one-at-a-time baseline runs. */
const SEQUENTIAL_ITEMS = 1000;

function range(count: number): number[] {
  return Array.from({ length: count }, (_, index) => index);
}

export async function benchmarkForEach(
  env: BenchEnvironment,
  plan: Plan['foreach'],
): Promise<BenchOutcome> {
  await ensureTemporalBaseline(env);
  const { id: workflowId } = await env.admin.POST('/workflows/Add', {
    body: { definition: forEachDefinition(plan) },
  });
  const seconds: number[] = [];
  const baselineSeconds: number[] = [];
  const runEvents: number[] = [];
  const runBytes: number[] = [];
  const chunkEvents: number[] = [];
  const chunkBytes: number[] = [];
  const baselineEvents: number[] = [];
  const baselineClosed: string[] = [];
  for (let index = 0; index < plan.rounds; index++) {
    const { executionId, handle, seconds: took } = await timedRun(env, workflowId);
    seconds.push(took);
    const task = await env.db
      .selectFrom('taskExecution')
      .select(['id', 'status', 'output'])
      .where('executionId', '=', executionId)
      .where('name', '=', 'Each')
      .executeTakeFirstOrThrow();
    const outputs = task.output as unknown[] | null;
    if (task.status !== 'Completed' || outputs?.length !== plan.items) {
      throw new Error(
        `forEach execution ${executionId}: ${task.status}, ${outputs?.length} outputs`,
      );
    }
    const run = await handle.describe();
    runEvents.push(run.historyLength);
    runBytes.push(Number(run.raw.workflowExecutionInfo?.historySizeBytes ?? 0));
    for (const { from } of itemChunks(plan.items)) {
      const chunk = await env.temporal.workflow
        .getHandle(forEachChunkWorkflowId(task.id, from))
        .describe();
      chunkEvents.push(chunk.historyLength);
      chunkBytes.push(Number(chunk.raw.workflowExecutionInfo?.historySizeBytes ?? 0));
    }

    // Trellis runs the quick `Flow/NoOp` items as local activities: so does the time baseline.
    baselineSeconds.push(await timedLocalNoOps(env, 'foreach', plan.items, plan.parallelism));
  }
  // What the items would cost one workflow's history as regular activities (any plugin that is
  // not quick), 100 at once: past Temporal's limit the server terminates it, and its length is
  // the point.
  const oneWorkflow = await env.temporal.workflow.start('manyNoOps', {
    taskQueue: baselineTaskQueue,
    workflowId: `bench-baseline-foreach-one-workflow-${randomUUID()}`,
    args: [plan.items, plan.parallelism],
  });
  const closed = await oneWorkflow.result().then(
    () => 'completed',
    () => 'terminated',
  );
  baselineEvents.push((await oneWorkflow.describe()).historyLength);
  baselineClosed.push(closed);
  // Items that end one at a time (parallelism 1, or slow items) get a workflow task each: the
  // most events an item can cost a workflow. Measured over 1,000 and scaled.
  const sequential = await env.temporal.workflow.start('manyNoOps', {
    taskQueue: baselineTaskQueue,
    workflowId: `bench-baseline-foreach-sequential-${randomUUID()}`,
    args: [SEQUENTIAL_ITEMS, 1],
  });
  await sequential.result();
  const sequentialPerItem = (await sequential.describe()).historyLength / SEQUENTIAL_ITEMS;

  const ours = summarize(seconds);
  const baseline = summarize(baselineSeconds);
  const kib = (bytes: number[]) => round(Math.max(...bytes) / 1024, 0);
  return {
    results: {
      foreach_10000_s: round(ours.median, 1),
      foreach_history_events: Math.max(...runEvents),
      foreach_chunk_history_events: Math.max(...chunkEvents),
    },
    rows: [
      {
        metric: `forEach of ${plan.items} items seconds (lower is better)`,
        ours: describeSummary(ours, 1),
        baseline: describeSummary(baseline, 1),
        ratio: describeSummary(ratioSummary(seconds, baselineSeconds)),
        target: 'completes',
      },
      {
        metric: 'forEach run history events / size',
        ours: `${Math.max(...runEvents)} / ${kib(runBytes)} KiB`,
        baseline: `${Math.max(...baselineEvents)} (${plan.items} regular activities in one workflow, ${baselineClosed.join(', ')})`,
        ratio: '',
        target: '< 51,200 / 50 MiB',
      },
      {
        metric: 'events per item in one workflow, one at a time',
        ours: '',
        baseline: `${round(sequentialPerItem, 2)} (× ${plan.items} = ${Math.round(sequentialPerItem * plan.items)})`,
        ratio: '',
        target: '',
      },
      {
        metric: 'forEach chunk history events / size (largest)',
        ours: `${Math.max(...chunkEvents)} / ${kib(chunkBytes)} KiB`,
        baseline: '',
        ratio: '',
        target: '< 51,200 / 50 MiB',
      },
    ],
    details: {
      shape: `${plan.items} Flow/NoOp items, parallelism ${plan.parallelism}, chunks of ${itemChunks(plan.items)[0]?.to ?? 0}`,
      seconds: ours,
      baselineSeconds: baseline,
      runEvents,
      runBytes,
      chunkEvents,
      chunkBytes,
      baselineEvents,
      baselineClosed,
      sequentialPerItem,
    },
  };
}
