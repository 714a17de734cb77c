/**
 * Reading an execution's logs at depth, through HTTP as a client reads them:
 * - `logs_read_ms`: p50 of a numbered page (`?page=N&pageSize=100`, offset paging), pages picked
 *   at random over an execution holding 100,000 entries;
 * - `logs_page_p50_ms_1m`: p50 of a cursor page (`?after=<id>&pageSize=100`, keyset paging) at
 *   depth 0, in the middle and at the end of an execution holding 1,000,000 entries, the worst of
 *   the three (a cursor page must cost the same at any depth).
 * The entries go in through the log repository's batch append, as the engine writes them.
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import * as executionRepository from '#store/execution-repository.js';
import * as logRepository from '#store/log-repository.js';
import { newId } from '#store/ids.js';
import type { LogLevel } from '#store/tables.js';
import { uniqueWorkflowName } from '../test/resilience/support/workload.js';
import type { BenchEnvironment } from './environment.js';
import type { Plan } from './plan.js';
import type { BenchOutcome } from './report.js';
import { percentile, round } from './stats.js';

const levels: LogLevel[] = ['Debug', 'Info', 'Info', 'Info', 'Warning'];

interface LoggedExecution {
  workflowId: string;
  executionId: string;
  entries: number;
  insertSeconds: number;
}

export async function benchmarkLogs(
  env: BenchEnvironment,
  plan: Plan['logs'],
): Promise<BenchOutcome> {
  // Numbered pages are read before the million-entry execution exists, as they always were.
  const paged = await loggedExecution(env, plan.entries);

  const url = (execution: LoggedExecution, query: string) =>
    `${env.apiUrl}/workflows/${execution.workflowId}/executions/${execution.executionId}/logs?${query}`;
  /** Milliseconds to read one page, checking it holds the entries expected. */
  const read = async (address: string, expected: number) => {
    const started = performance.now();
    const response = await fetch(address, { headers: { authorization: env.authorization } });
    const body = (await response.json()) as { data: unknown[] };
    const elapsed = performance.now() - started;
    if (response.status !== 200 || body.data?.length !== expected) {
      throw new Error(`${address}: HTTP ${response.status}, ${body.data?.length} entries`);
    }
    return elapsed;
  };

  // Offset paging, pages at random.
  const pages = Math.ceil(paged.entries / plan.pageSize);
  const page = (n: number) =>
    read(
      url(paged, `page=${n}&pageSize=${plan.pageSize}`),
      Math.min(plan.pageSize, paged.entries - (n - 1) * plan.pageSize),
    );
  for (let index = 0; index < 10; index++) await page(1 + index); // warm-up
  const random: number[] = [];
  for (let index = 0; index < plan.samples; index++) {
    random.push(await page(1 + Math.floor(Math.random() * pages)));
  }
  const first: number[] = [];
  const last: number[] = [];
  for (let index = 0; index < 20; index++) {
    first.push(await page(1));
    last.push(await page(pages));
  }

  // Cursor paging after the first entry, the middle one, and the one a page before the end.
  const deep =
    plan.cursorEntries === plan.entries ? paged : await loggedExecution(env, plan.cursorEntries);
  const depths = {
    start: 0,
    middle: Math.floor(deep.entries / 2),
    end: deep.entries - plan.pageSize - 1,
  };
  const cursors = await Promise.all(
    Object.entries(depths).map(async ([name, position]) => ({
      name,
      position,
      after: await entryIdAt(env, deep.executionId, position),
      ms: [] as number[],
    })),
  );
  const cursorPage = (cursor: (typeof cursors)[number]) =>
    read(
      url(deep, `after=${cursor.after}&pageSize=${plan.pageSize}`),
      Math.min(plan.pageSize, deep.entries - cursor.position - 1),
    );
  for (const cursor of cursors) for (let index = 0; index < 5; index++) await cursorPage(cursor);
  for (let index = 0; index < plan.samples; index++) {
    for (const cursor of cursors) cursor.ms.push(await cursorPage(cursor));
  }
  const cursorP50 = Object.fromEntries(
    cursors.map((cursor) => [cursor.name, round(percentile(cursor.ms, 50), 2)]),
  );
  const worstCursorP50 = Math.max(...Object.values(cursorP50));

  const p50 = percentile(random, 50);
  return {
    results: { logs_read_ms: round(p50, 1), logs_page_p50_ms_1m: round(worstCursorP50, 1) },
    rows: [
      {
        metric: `logs page of ${plan.pageSize} by number (of ${paged.entries}) p50 ms`,
        ours: `${round(p50, 1)} (first ${round(percentile(first, 50), 1)}, last ${round(percentile(last, 50), 1)})`,
        baseline: '',
        ratio: '',
        target: '',
      },
      {
        metric: `logs page of ${plan.pageSize} after= (of ${deep.entries}) p50 ms`,
        ours: `${round(worstCursorP50, 1)} (start ${cursorP50.start}, middle ${cursorP50.middle}, end ${cursorP50.end})`,
        baseline: '',
        ratio: '',
        target: '≤ 10 at any depth',
      },
    ],
    details: {
      numbered: {
        entries: paged.entries,
        insertSeconds: round(paged.insertSeconds, 1),
        randomPageMs: { p50, p90: percentile(random, 90), p99: percentile(random, 99) },
        firstPageP50Ms: percentile(first, 50),
        lastPageP50Ms: percentile(last, 50),
      },
      cursor: {
        entries: deep.entries,
        insertSeconds: round(deep.insertSeconds, 1),
        samples: plan.samples,
        depths: Object.fromEntries(
          cursors.map((cursor) => [
            cursor.name,
            {
              position: cursor.position,
              p50: percentile(cursor.ms, 50),
              p90: percentile(cursor.ms, 90),
              p99: percentile(cursor.ms, 99),
            },
          ]),
        ),
      },
    },
  };
}

/** A completed execution of a stored workflow holding `entries` log entries of its own. */
async function loggedExecution(env: BenchEnvironment, entries: number): Promise<LoggedExecution> {
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
  const started = performance.now();
  const start = Date.now();
  const batch = 10_000;
  for (let offset = 0; offset < entries; offset += batch) {
    const rows = Array.from({ length: Math.min(batch, entries - offset) }, (_, index) => {
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
    await logRepository.appendLogs(env.db, rows);
  }
  const insertSeconds = (performance.now() - started) / 1000;
  // The tables as autovacuum leaves them some time after such a run (vacuumed, fresh
  // statistics), rather than autovacuum working through the new rows while pages are timed.
  await sql`vacuum (analyze) log_entry, execution_event`.execute(env.db);
  return { workflowId, executionId, entries, insertSeconds };
}

/** The id of the execution's own entry at `position` (0 = the first), in the order they were written. */
async function entryIdAt(
  env: BenchEnvironment,
  executionId: string,
  position: number,
): Promise<string> {
  const row = await env.db
    .selectFrom('logEntry')
    .select('id')
    .where('executionId', '=', executionId)
    .where('taskExecutionId', 'is', null)
    .orderBy('seq')
    .offset(position)
    .limit(1)
    .executeTakeFirstOrThrow();
  return row.id;
}
