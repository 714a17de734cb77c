/**
 * `logs_read_ms`: p50 of reading one page (100 entries) of the logs of an execution that wrote
 * 100,000 entries, through HTTP as a client reads it, pages picked at random over the whole run.
 * The entries go in through the execution repository's batch append, as the engine writes them.
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import * as executionRepository from '../core/src/db/execution-repository.js';
import * as logRepository from '../core/src/db/log-repository.js';
import { newId } from '../core/src/db/ids.js';
import type { LogLevel } from '../core/src/db/tables.js';
import { uniqueWorkflowName } from '../test/resilience/support/workload.js';
import type { BenchEnvironment } from './environment.js';
import type { Plan } from './plan.js';
import type { BenchOutcome } from './report.js';
import { percentile, round } from './stats.js';

const levels: LogLevel[] = ['Debug', 'Info', 'Info', 'Info', 'Warning'];

export async function benchmarkLogs(
  env: BenchEnvironment,
  plan: Plan['logs'],
): Promise<BenchOutcome> {
  const name = uniqueWorkflowName('bench-logs');
  const definition = JSON.stringify({
    name,
    tasks: [{ name: 'Only', type: { plugin: 'Flow/NoOp' } }],
  });
  const { id: workflowId } = await env.admin.POST('/workflows/Add', { body: { definition } });
  const executionId = newId();
  await executionRepository.createExecutionWithTasks(env.db, {
    id: executionId,
    workflowId,
    workflowName: name,
    definition,
    taskNames: ['Only'],
    temporalWorkflowId: `bench-logs-${executionId}`,
    status: 'Completed',
    executionEnd: new Date(),
  });
  const insertStarted = performance.now();
  const start = Date.now();
  const batch = 10_000;
  for (let offset = 0; offset < plan.entries; offset += batch) {
    const entries = Array.from({ length: Math.min(batch, plan.entries - offset) }, (_, index) => {
      const n = offset + index;
      return {
        executionId,
        taskExecutionId: null,
        dedupeKey: `bench:${n}`,
        level: levels[n % levels.length]!,
        message: `Log entry ${n} of the benchmark's long execution, about as long as a real one.`,
        timeStamp: new Date(start + n),
      };
    });
    await logRepository.appendLogs(env.db, entries);
  }
  const insertSeconds = (performance.now() - insertStarted) / 1000;
  // Fresh statistics, as autovacuum would have them some time after such a run.
  await sql`analyze log_entry`.execute(env.db);

  const pages = Math.ceil(plan.entries / plan.pageSize);
  const read = async (page: number) => {
    const started = performance.now();
    const response = await fetch(
      `${env.apiUrl}/workflows/${workflowId}/executions/${executionId}/logs?page=${page}&pageSize=${plan.pageSize}`,
      { headers: { authorization: env.authorization } },
    );
    const body = (await response.json()) as { data: unknown[] };
    const elapsed = performance.now() - started;
    if (
      response.status !== 200 ||
      body.data.length !== Math.min(plan.pageSize, plan.entries - (page - 1) * plan.pageSize)
    ) {
      throw new Error(
        `Page ${page} of the logs: HTTP ${response.status}, ${body.data?.length} entries`,
      );
    }
    return elapsed;
  };
  for (let index = 0; index < 10; index++) await read(1 + index); // warm-up
  const random: number[] = [];
  for (let index = 0; index < plan.samples; index++) {
    random.push(await read(1 + Math.floor(Math.random() * pages)));
  }
  const first: number[] = [];
  const last: number[] = [];
  for (let index = 0; index < 20; index++) {
    first.push(await read(1));
    last.push(await read(pages));
  }

  const p50 = percentile(random, 50);
  return {
    results: { logs_read_ms: round(p50, 1) },
    rows: [
      {
        metric: `logs page of ${plan.pageSize} (of ${plan.entries}) p50 ms`,
        ours: `${round(p50, 1)} (first ${round(percentile(first, 50), 1)}, last ${round(percentile(last, 50), 1)})`,
        baseline: '',
        ratio: '',
        target: '',
      },
    ],
    details: {
      entries: plan.entries,
      insertSeconds: round(insertSeconds, 1),
      randomPageMs: { p50, p90: percentile(random, 90), p99: percentile(random, 99) },
      firstPageP50Ms: percentile(first, 50),
      lastPageP50Ms: percentile(last, 50),
    },
  };
}
