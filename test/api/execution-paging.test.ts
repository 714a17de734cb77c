/**
 * `GET /workflows/{workflowId}/executions?after=`: keyset paging through a workflow's runs,
 * newest first, beside the numbered pages of the seed. The executions are written straight to
 * PostgreSQL (no run needed to list them), with ties in their start times, which the id breaks.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutionWithTasks } from '#store/execution-repository.js';
import type { ExecutionStatus } from '#store/tables.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import { expectFailure } from './api-error.js';
import { simpleDefinition } from './definitions.js';

let trellis: Trellis;
let workflowId: string;
let otherWorkflowId: string;
let otherExecutionId: string;

const executions = '/workflows/{workflowId}/executions' as const;
const statuses: ExecutionStatus[] = ['Completed', 'Failed', 'Running'];

beforeAll(async () => {
  trellis = await startTrellis({ worker: false });
  const add = async (name: string) =>
    (await trellis.admin.POST('/workflows/Add', { body: { definition: simpleDefinition(name) } }))
      .id;
  [workflowId, otherWorkflowId] = await Promise.all([add('Paged runs'), add('Other runs')]);
  // 37 runs over 13 distinct start times: every third shares its time with its neighbours.
  const base = Date.parse('2026-11-20T00:00:00Z');
  for (let index = 0; index < 37; index++) {
    await createExecutionWithTasks(trellis.db, {
      workflowId,
      workflowName: 'Paged runs',
      definition: simpleDefinition('Paged runs'),
      taskNames: [],
      temporalWorkflowId: `paging-${randomUUID()}`,
      status: statuses[index % statuses.length]!,
      executionStart: new Date(base + Math.floor(index / 3) * 1000),
    });
  }
  const { execution } = await createExecutionWithTasks(trellis.db, {
    workflowId: otherWorkflowId,
    workflowName: 'Other runs',
    definition: simpleDefinition('Other runs'),
    taskNames: [],
    temporalWorkflowId: `paging-${randomUUID()}`,
    status: 'Completed',
  });
  otherExecutionId = execution.id;
});
afterAll(async () => {
  await trellis?.stop();
});

/** Every page after `after` until a short one, through the SDK. */
async function pageThrough(pageSize: number, status?: ExecutionStatus) {
  const ids: string[] = [];
  let after: string | undefined;
  for (;;) {
    const envelope = await trellis.admin.envelope.GET(executions, {
      params: {
        path: { workflowId },
        query: { pageSize, ...(after ? { after } : {}), ...(status ? { status } : {}) },
      },
    });
    if (after) expect(envelope).not.toHaveProperty('pagination');
    ids.push(...envelope.data.map((item) => item.id));
    if (envelope.data.length < pageSize) return ids;
    after = envelope.data.at(-1)!.id;
  }
}

describe('GET /workflows/{workflowId}/executions?after=', () => {
  it('pages through every run once, in the order of the whole list, ties included', async () => {
    const whole = await trellis.admin.GET(executions, { params: { path: { workflowId } } });
    expect(whole).toHaveLength(37);
    const starts = whole.map((item) => Date.parse(item.executionStart));
    expect(starts).toEqual([...starts].sort((a, b) => b - a));
    for (const pageSize of [1, 4, 36, 37, 100]) {
      expect(await pageThrough(pageSize)).toEqual(whole.map((item) => item.id));
    }
    // The numbered pages agree with it.
    const second = await trellis.admin.page(executions, {
      params: { path: { workflowId }, query: { page: 2, pageSize: 5 } },
    });
    expect(second.data.map((item) => item.id)).toEqual(whole.slice(5, 10).map((item) => item.id));
    expect(second.pagination).toMatchObject({ totalCount: 37, totalPages: 8 });
  });

  it('pages within a status filter', async () => {
    const failed = await trellis.admin.GET(executions, {
      params: { path: { workflowId }, query: { status: 'Failed' } },
    });
    expect(failed).toHaveLength(12);
    expect(await pageThrough(5, 'Failed')).toEqual(failed.map((item) => item.id));
  });

  it('ends with an empty page after the last run', async () => {
    const whole = await trellis.admin.GET(executions, { params: { path: { workflowId } } });
    const rest = await trellis.admin.GET(executions, {
      params: { path: { workflowId }, query: { after: whole.at(-1)!.id } },
    });
    expect(rest).toEqual([]);
  });

  it('refuses a cursor of another workflow, of nothing, or beside page, with 400', async () => {
    for (const after of [otherExecutionId, randomUUID()]) {
      await expectFailure(
        trellis.admin.GET(executions, { params: { path: { workflowId }, query: { after } } }),
        400,
        /query\.after: must be the id of an execution of this workflow/,
      );
    }
    const [first] = await trellis.admin.GET(executions, { params: { path: { workflowId } } });
    await expectFailure(
      trellis.admin.GET(executions, {
        params: { path: { workflowId }, query: { after: first!.id, page: 1 } },
      }),
      400,
      /cannot be combined with page/,
    );
  });

  it('reads a page as an index range scan from the cursor, without a sort', async () => {
    const [first] = await trellis.admin.GET(executions, { params: { path: { workflowId } } });
    const plans = await trellis.db.transaction().execute(async (trx) => {
      // Tables this small make a sequential or bitmap scan and a sort look as cheap: take them
      // away, so the plan shows whether the ordered index range scan exists at all.
      await sql`set local enable_seqscan = off`.execute(trx);
      await sql`set local enable_bitmapscan = off`.execute(trx);
      const explain = async (status: ExecutionStatus | null) => {
        const { rows } = await sql<{ 'QUERY PLAN': string }>`
          explain select id, status, execution_start, execution_end from workflow_execution
          where workflow_id = ${workflowId}
          ${status ? sql`and status = ${status}` : sql``}
          and (execution_start, id) < (select c.execution_start, c.id from workflow_execution c
            where c.id = ${first!.id} and c.workflow_id = ${workflowId})
          order by execution_start desc, id desc limit 100`.execute(trx);
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      };
      return [await explain(null), await explain('Failed')];
    });
    expect(plans[0]).toMatch(/Index Scan using workflow_execution_workflow_start_id_idx/);
    expect(plans[1]).toMatch(/Index Scan using workflow_execution_workflow_status_start_id_idx/);
    for (const plan of plans) expect(plan).not.toMatch(/Sort/);
  });
});
