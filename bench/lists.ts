/**
 * Reading a workflow's execution list at depth, through HTTP as a client reads it:
 * - `executions_page_p50_ms_100k`: p50 of a cursor page
 *   (`GET /workflows/{id}/executions?after=<id>&pageSize=100`, keyset paging) at depth 0, in the
 *   middle and a page before the end of a workflow with 100,000 executions, the worst of the three
 *   (a cursor page must cost the same at any depth);
 * - beside it, numbered pages (`?page=N&pageSize=100`: offset paging with a total count) at the
 *   same depths, for contrast.
 * The executions are written in one statement (a list needs no runs behind it), with start times a
 * second apart, and the table is vacuumed and analysed as autovacuum would leave it.
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { uniqueWorkflowName } from '../test/resilience/support/workload.js';
import type { BenchEnvironment } from './environment.js';
import type { Plan } from './plan.js';
import type { BenchOutcome } from './report.js';
import { percentile, round } from './stats.js';

export async function benchmarkLists(
  env: BenchEnvironment,
  plan: Plan['lists'],
): Promise<BenchOutcome> {
  const name = uniqueWorkflowName('bench-lists');
  const definition = JSON.stringify({
    name,
    tasks: [{ name: 'Only', type: { plugin: 'Flow/NoOp' } }],
  });
  const { id: workflowId } = await env.admin.POST('/workflows/Add', { body: { definition } });
  const started = performance.now();
  await sql`
    insert into workflow_execution (id, workflow_id, workflow_name, definition, status, message,
      temporal_workflow_id, execution_start, execution_end, inputs, revision)
    select gen_random_uuid(), ${workflowId}, ${name}, ${definition}, 'Completed', '',
      'bench-lists-' || n, timestamptz '2026-01-01' + n * interval '1 second',
      timestamptz '2026-01-01' + n * interval '1 second' + interval '20 milliseconds', '{}', 1
    from generate_series(1, ${plan.executions}::int) as n`.execute(env.db);
  const insertSeconds = (performance.now() - started) / 1000;
  await sql`vacuum (analyze) workflow_execution`.execute(env.db);

  const base = `${env.apiUrl}/workflows/${workflowId}/executions`;
  /** Milliseconds to read one page, checking it holds the executions expected. */
  const read = async (query: string, expected: number) => {
    const began = performance.now();
    const response = await fetch(`${base}?${query}`, {
      headers: { authorization: env.authorization },
    });
    const body = (await response.json()) as { data: unknown[] };
    const elapsed = performance.now() - began;
    if (response.status !== 200 || body.data?.length !== expected) {
      throw new Error(`${base}?${query}: HTTP ${response.status}, ${body.data?.length} items`);
    }
    return elapsed;
  };

  const { pageSize, samples, executions } = plan;
  const depths = { start: 0, middle: Math.floor(executions / 2), end: executions - pageSize - 1 };
  const points = await Promise.all(
    Object.entries(depths).map(async ([depth, position]) => ({
      depth,
      position,
      after: await executionIdAt(env, workflowId, position),
      cursor: [] as number[],
      numbered: [] as number[],
    })),
  );
  const expected = (position: number) => Math.min(pageSize, executions - position - 1);
  const cursorPage = (point: (typeof points)[number]) =>
    read(`after=${point.after}&pageSize=${pageSize}`, expected(point.position));
  // The numbered page that starts right after the cursor's execution.
  const numberedPage = (point: (typeof points)[number]) =>
    read(
      `page=${Math.floor((point.position + 1) / pageSize) + 1}&pageSize=${pageSize}`,
      Math.min(pageSize, executions - Math.floor((point.position + 1) / pageSize) * pageSize),
    );
  for (const point of points) {
    for (let index = 0; index < 5; index++) {
      await cursorPage(point);
      await numberedPage(point);
    }
  }
  for (let index = 0; index < samples; index++) {
    for (const point of points) {
      point.cursor.push(await cursorPage(point));
      point.numbered.push(await numberedPage(point));
    }
  }
  const p50 = (values: number[]) => round(percentile(values, 50), 2);
  const cursorP50 = Object.fromEntries(points.map((point) => [point.depth, p50(point.cursor)]));
  const numberedP50 = Object.fromEntries(points.map((point) => [point.depth, p50(point.numbered)]));
  const worst = Math.max(...Object.values(cursorP50));

  return {
    results: { executions_page_p50_ms_100k: round(worst, 1) },
    rows: [
      {
        metric: `executions page of ${pageSize} after= (of ${executions}) p50 ms`,
        ours: `${round(worst, 1)} (start ${cursorP50.start}, middle ${cursorP50.middle}, end ${cursorP50.end})`,
        baseline: '',
        ratio: '',
        target: '≤ 10 at any depth',
      },
      {
        metric: `executions page of ${pageSize} by number (of ${executions}) p50 ms`,
        ours: `start ${numberedP50.start}, middle ${numberedP50.middle}, end ${numberedP50.end}`,
        baseline: '',
        ratio: '',
        target: '',
      },
    ],
    details: {
      executions,
      insertSeconds: round(insertSeconds, 1),
      samples,
      depths: Object.fromEntries(
        points.map((point) => [
          point.depth,
          {
            position: point.position,
            cursor: { p50: percentile(point.cursor, 50), p99: percentile(point.cursor, 99) },
            numbered: { p50: percentile(point.numbered, 50), p99: percentile(point.numbered, 99) },
          },
        ]),
      ),
    },
  };
}

/** The id of the workflow's execution at `position` of its list (0 = the newest). */
async function executionIdAt(
  env: BenchEnvironment,
  workflowId: string,
  position: number,
): Promise<string> {
  const row = await env.db
    .selectFrom('workflowExecution')
    .select('id')
    .where('workflowId', '=', workflowId)
    .orderBy('executionStart', 'desc')
    .orderBy('id', 'desc')
    .offset(position)
    .limit(1)
    .executeTakeFirstOrThrow();
  return row.id;
}
