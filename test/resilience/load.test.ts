/**
 * Load (issue 5): 500 executions started concurrently through the API all end, with exactly the
 * task rows and log entries they should have, and none left Running.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTrellis, type Trellis } from '../support/harness.js';
import { addWorkflow, execute } from '../support/engine-support.js';
import { runConcurrently } from './support/concurrency.js';
import { ledgerOf, waitUntilSettled } from './support/ledger.js';
import { chainDefinition, expectedChainLogs, uniqueWorkflowName } from './support/workload.js';

const executions = 500;
/** Requests in flight from the client, as a pooled client would send them. */
const clientConcurrency = 50;
const steps = ['noop', 'noop', 'noop'] as const;

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true, config: { Database: { PoolSize: 10 } } });
});
afterAll(async () => {
  await trellis?.stop();
});

describe('load', () => {
  it(`${executions} executions started concurrently through the API all complete, rows exact`, async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      chainDefinition(uniqueWorkflowName('load'), [...steps]),
    );

    const started = await runConcurrently(executions, clientConcurrency, () =>
      execute(trellis.admin, workflowId),
    );
    expect(new Set(started).size).toBe(executions);

    const ledger = await waitUntilSettled(trellis.db, workflowId, executions, 240_000);
    const logs = expectedChainLogs([...steps]);
    expect(ledger).toEqual({
      executions,
      executionsByStatus: { Completed: executions },
      active: 0,
      tasks: executions * steps.length,
      tasksByStatus: { Completed: executions * steps.length },
      retriedTasks: 0,
      interruptedAttempts: 0,
      executionLogs: executions * logs.executionLogs,
      taskLogs: executions * logs.taskLogs,
      duplicateLogs: 0,
    });

    // What the API shows agrees: nothing Running, every started execution listed Completed.
    const running = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId }, query: { status: 'Running' } },
    });
    expect(running).toEqual([]);
    const completed = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId }, query: { status: 'Completed', pageSize: 1000, page: 1 } },
    });
    expect(new Set(completed.map((execution) => execution.id))).toEqual(new Set(started));
    expect(await ledgerOf(trellis.db, workflowId)).toEqual(ledger);
  }, 300_000);
});
