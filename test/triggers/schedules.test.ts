import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleId } from '#protocol/ids.js';
import { TrellisExecutionId, TrellisWorkflowId } from '#protocol/search-attributes.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  addWorkflow,
  definition,
  eventually,
  executionLogs,
  noop,
  statuses,
} from '../support/engine-support.js';

let trellis: Trellis;
let connection: Connection;
let client: Client;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  connection = await Connection.connect({ address: trellis.config.Temporal.Address! });
  client = new Client({ connection, namespace: trellis.config.Temporal.Namespace });
});
afterAll(async () => {
  await connection?.close();
  await trellis?.stop();
});

describe('a TimeBased trigger firing', () => {
  it('creates an ordinary execution with its task rows, visible in the API and in Temporal', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([
        { name: 'First', type: noop },
        { name: 'Second', type: noop, dependencies: ['First'] },
      ]),
    );
    const { triggerId } = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      // Once a year: the test fires it by hand instead of waiting.
      body: { workflowId, type: 'TimeBased', status: 'Active', properties: { cron: '0 0 1 1 *' } },
    });
    await client.schedule.getHandle(scheduleId(triggerId)).trigger();

    const [listed] = await eventually(async () => {
      const executions = await trellis.admin.GET('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
      });
      expect(executions).toHaveLength(1);
      return executions;
    });
    const executionId = listed!.id;
    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 30_000,
    });
    expect(finished.status).toBe('Completed');
    expect(await statuses(trellis.admin, workflowId, executionId)).toEqual({
      First: 'Completed',
      Second: 'Completed',
    });
    expect((await executionLogs(trellis.admin, workflowId, executionId))[0]).toBe(
      `Execution started (2 tasks) by trigger ${triggerId}.`,
    );

    // Operators find the run by the Trellis ids; the execution id was set once it existed.
    const row = await trellis.db
      .selectFrom('workflowExecution')
      .select(['temporalWorkflowId', 'triggerId'])
      .where('id', '=', executionId)
      .executeTakeFirstOrThrow();
    expect(row.triggerId).toBe(triggerId);
    // Trellis records the end before the run's last workflow task reaches Temporal (quick tasks
    // and bookkeeping run inside it as local activities): read Temporal once the run closed.
    const handle = client.workflow.getHandle(row.temporalWorkflowId);
    await handle.result();
    const description = await handle.describe();
    expect(description.typedSearchAttributes.get(TrellisExecutionId)).toBe(executionId);
    expect(description.typedSearchAttributes.get(TrellisWorkflowId)).toBe(workflowId);

    // Paused so the yearly schedule cannot fire in the middle of another test run.
    await trellis.admin.PUT('/workflows/{workflowId}/triggers/{triggerId}', {
      params: { path: { workflowId, triggerId } },
      body: {
        workflowId,
        triggerId,
        type: 'TimeBased',
        status: 'DeActive',
        properties: { cron: '0 0 1 1 *' },
      },
    });
  });
});
