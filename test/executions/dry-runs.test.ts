/**
 * Issue 33, dry runs: a run started with `dryRun` runs its pure tasks for real and gives every
 * other task an output from a stated source (the request's mock, the latest real run's recorded
 * output, one generated from the plugin's output schema) without performing anything; its
 * approvals are approved without asking anyone, no notification goes out, and it is marked as a
 * dry run in the API, the audit trail and Temporal.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionWorkflowId } from '#protocol/ids.js';
import { TrellisApiError, type TrellisClient } from '../../sdk/src/index.js';
import { loopbackAllowed, startTrellis, users, type Trellis } from '../support/harness.js';
import { createTestDatabase } from '../support/services.js';
import { errorOf } from '../support/expect-error.js';
import { startRecordingReceiver, type RecordingReceiver } from '../support/recording-receiver.js';
import { addWorkflow, definition, tasksOf, taskLogs } from '../support/engine-support.js';

let trellis: Trellis;
let receiver: RecordingReceiver;
let origin: string;
/** Requests the HTTP receiver got, by path: the HTTP task's and the notifications'. */
let received: string[];
/** The database a task writes to (not Trellis's own). */
let connectionString: string;
let target: pg.Client;

beforeAll(async () => {
  receiver = await startRecordingReceiver({ ok: 1 });
  ({ origin, received } = receiver);
  connectionString = await createTestDatabase();
  target = new pg.Client({ connectionString });
  await target.connect();
  await target.query('create table orders (id serial primary key, note text not null)');
  trellis = await startTrellis({
    worker: true,
    config: {
      ...loopbackAllowed,
      Notifications: {
        Webhooks: [
          {
            Url: `${origin}/notifications`,
            Events: ['ApprovalRequested', 'ExecutionCompleted', 'ExecutionFailed'],
            Secret: `whsec_${randomBytes(24).toString('base64')}`,
          },
        ],
      },
    },
  });
});
afterAll(async () => {
  await trellis?.stop();
  await target?.end();
  await receiver?.close();
});

/** A workflow that calls out (HTTP), writes a row, waits for an approval and computes a hash. */
function orderFlow() {
  return definition([
    {
      name: 'Fetch',
      type: { plugin: 'Net/Http' },
      parameters: { url: `${origin}/orders`, method: 'GET' },
    },
    {
      name: 'Approve',
      type: { plugin: 'Flow/NoOp' },
      dependencies: ['Fetch'],
      manualApproval: { enabled: true, comment: 'Write the order?' },
    },
    {
      name: 'Write',
      type: { plugin: 'Database/PostgreSql', specifications: { connectionString } },
      dependencies: ['Approve'],
      parameters: {
        sql: 'insert into orders (note) values ($1)',
        params: ["$[Outputs('Fetch').url]"],
      },
    },
    {
      name: 'Digest',
      type: { plugin: 'Security/Hash' },
      dependencies: ['Write'],
      parameters: { algorithm: 'sha256', input: 'order' },
    },
    {
      name: 'Never',
      type: { plugin: 'Flow/NoOp' },
      dependencies: ['Write'],
      executionCondition: { expression: "Outputs('Write').rowCount > 100" },
    },
  ]);
}

async function dryRun(
  client: TrellisClient,
  workflowId: string,
  body: { mocks?: Record<string, unknown>; inputs?: Record<string, unknown> } = {},
) {
  const started = await client.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId }, query: { waitSeconds: 60 } },
    body: { dryRun: true, ...body },
  });
  return started;
}

/** Each task's log, by task name. */
async function logsByTask(workflowId: string, executionId: string) {
  const tasks = await tasksOf(trellis.admin, workflowId, executionId);
  const logs: Record<string, string[]> = {};
  for (const [name, task] of Object.entries(tasks)) {
    logs[name] = await taskLogs(trellis.admin, workflowId, executionId, task.id);
  }
  return { tasks, logs };
}

async function outputOf(workflowId: string, executionId: string, taskExecutionId: string) {
  const task = await trellis.admin.GET(
    '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}',
    { params: { path: { workflowId, executionId, taskExecutionId } } },
  );
  return task.output;
}

describe('a dry run', () => {
  it('reaches neither the HTTP receiver nor the database, approves without asking, completes and says where each output came from', async () => {
    const workflowId = await addWorkflow(trellis.admin, orderFlow());
    const before = received.length;
    const started = await dryRun(trellis.admin, workflowId, {
      mocks: {
        Fetch: {
          status: 200,
          statusText: 'OK',
          ok: true,
          url: 'mocked',
          headers: {},
          body: { n: 1 },
        },
      },
    });
    const { executionId } = started;
    expect(started.status).toBe('Completed');

    expect(received.slice(before)).toEqual([]); // neither the HTTP task nor a notification
    const { rows } = await target.query<{ count: number }>(
      'select count(*)::int as count from orders',
    );
    expect(rows[0]!.count).toBe(0);

    const { tasks, logs } = await logsByTask(workflowId, executionId);
    expect(
      Object.fromEntries(Object.entries(tasks).map(([name, task]) => [name, task.status])),
    ).toEqual({
      Fetch: 'Completed',
      Approve: 'Completed',
      Write: 'Completed',
      Digest: 'Completed',
      Never: 'Skipped',
    });
    expect(logs.Fetch).toContain(
      "Dry run: output from the request's mock; Net/Http (effects: calls) was not run.",
    );
    // The expression's value is shown as the task got it.
    expect(logs.Write).toContain(
      'Dry run: parameters resolved to {"sql":"insert into orders (note) values ($1)","params":["mocked"]}.',
    );
    expect(logs.Write).toContain(
      'Dry run: output generated from the output schema of Database/PostgreSql; Database/PostgreSql (effects: writes) was not run.',
    );
    expect(await outputOf(workflowId, executionId, tasks.Write!.id)).toEqual({
      command: expect.any(String),
      rowCount: expect.anything(),
      fields: expect.any(Array),
      rows: expect.any(Array),
    });
    expect(logs.Approve!.join('\n')).toMatch(
      /Dry run: approval \S+ would be asked \(Write the order\?\); it is approved at once, no one is asked\./,
    );
    expect(logs.Approve).toContain('Approved by dry run: a dry run asks no one.');
    // A pure task runs for real: its output is the digest, not a generated one.
    const digest = (await outputOf(workflowId, executionId, tasks.Digest!.id)) as {
      digest: string;
    };
    expect(digest.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(logs.Digest!.some((line) => line.includes('generated'))).toBe(false);
    expect(tasks.Never!.message).toContain('is false');

    // The plan as the worker decided it, a field of each task (the log lines are for people).
    const approvalId = /approval (\S+) would be asked/.exec(logs.Approve!.join('\n'))![1];
    expect(
      Object.fromEntries(Object.entries(tasks).map(([name, task]) => [name, task.dryRun])),
    ).toEqual({
      Fetch: {
        source: 'Mock',
        recordedFrom: null,
        plugin: 'Net/Http',
        effects: 'calls',
        parameters: { url: `${origin}/orders`, method: 'GET' },
        approval: null,
      },
      Approve: {
        source: 'RanForReal',
        recordedFrom: null,
        plugin: 'Flow/NoOp',
        effects: 'pure',
        parameters: {},
        approval: { approvalId, comment: 'Write the order?' },
      },
      Write: {
        source: 'Generated',
        recordedFrom: null,
        plugin: 'Database/PostgreSql',
        effects: 'writes',
        parameters: { sql: 'insert into orders (note) values ($1)', params: ['mocked'] },
        approval: null,
      },
      Digest: {
        source: 'RanForReal',
        recordedFrom: null,
        plugin: 'Security/Hash',
        effects: 'pure',
        parameters: { algorithm: 'sha256', input: 'order' },
        approval: null,
      },
      Never: null,
    });
    const detailed = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}',
      { params: { path: { workflowId, executionId, taskExecutionId: tasks.Write!.id } } },
    );
    expect(detailed.dryRun).toEqual(tasks.Write!.dryRun);

    // Marked as a dry run: detail, lists, the audit trail, Temporal.
    const detail = await trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
      params: { path: { workflowId, executionId } },
    });
    expect(detail.dryRun).toBe(true);
    const listed = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    expect(listed.find((item) => item.id === executionId)?.dryRun).toBe(true);
    const across = await trellis.admin.GET('/executions', { params: { query: { workflowId } } });
    expect(across.find((item) => item.id === executionId)?.dryRun).toBe(true);
    const [audited] = await trellis.admin.GET('/audit', {
      params: { query: { operation: 'execution.dryRun', pageSize: 1 } },
    });
    expect(audited?.targets).toMatchObject({ executionId });
    const stream = await fetch(
      `${trellis.baseUrl}/workflows/${workflowId}/executions/${executionId}/events`,
      {
        headers: {
          authorization: `Basic ${Buffer.from(`${users.admin.username}:${users.admin.password}`).toString('base64')}`,
          accept: 'text/event-stream',
        },
      },
    );
    const executionEvents = (await stream.text())
      .split('\n\n')
      .filter((frame) => frame.includes('event: execution'))
      .map((frame) => JSON.parse(/^data: (.*)$/m.exec(frame)![1]!) as { dryRun: boolean });
    expect(executionEvents.length).toBeGreaterThan(0);
    expect(executionEvents.every((event) => event.dryRun === true)).toBe(true);
    const described = await trellis.temporal.client.workflow
      .getHandle(executionWorkflowId(executionId))
      .describe();
    expect(described.searchAttributes.TrellisDryRun).toEqual([true]);
  });

  it("makes a dry run's subworkflow child a dry run too, marked in Temporal, reaching nothing", async () => {
    const childId = await addWorkflow(
      trellis.admin,
      definition([
        { name: 'Call', type: { plugin: 'Net/Http' }, parameters: { url: `${origin}/child` } },
      ]),
    );
    const parentId = await addWorkflow(
      trellis.admin,
      definition([{ name: 'Sub', workflow: childId }]),
    );
    const before = received.length;
    const started = await dryRun(trellis.admin, parentId);
    expect(started.status).toBe('Completed');
    const [child] = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId: childId } },
    });
    expect(child).toMatchObject({ status: 'Completed', dryRun: true });
    expect(received.slice(before).filter((url) => url === '/child')).toEqual([]);
    const described = await trellis.temporal.client.workflow
      .getHandle(executionWorkflowId(child!.id))
      .describe();
    expect(described.searchAttributes.TrellisDryRun).toEqual([true]);
  });

  it('records the plan of each forEach item, its parameters resolved for the item', async () => {
    const workflowId = await addWorkflow(
      trellis.admin,
      definition([
        {
          name: 'Each',
          type: { plugin: 'Net/Http' },
          forEach: { items: '[1, 2]' },
          parameters: { url: `${origin}/item/$[Item()]` },
        },
      ]),
    );

    const { executionId, status } = await dryRun(trellis.admin, workflowId);

    expect(status).toBe('Completed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(
      Object.fromEntries(Object.entries(tasks).map(([name, task]) => [name, task.dryRun])),
    ).toEqual({
      Each: null,
      'Each[0]': expect.objectContaining({
        source: 'Generated',
        parameters: { url: `${origin}/item/1` },
      }),
      'Each[1]': expect.objectContaining({
        source: 'Generated',
        parameters: { url: `${origin}/item/2` },
      }),
    });
    expect(received.filter((path) => path.startsWith('/item'))).toEqual([]);
  });

  it("takes a task's output from the latest completed real run, else from its plugin's output schema", async () => {
    const def = definition([
      { name: 'Call', type: { plugin: 'Net/Http' }, parameters: { url: `${origin}/real` } },
    ]);
    const workflowId = await addWorkflow(trellis.admin, def);

    const generated = await dryRun(trellis.admin, workflowId);
    const first = await logsByTask(workflowId, generated.executionId);
    expect(first.logs.Call).toContain(
      'Dry run: output generated from the output schema of Net/Http; Net/Http (effects: calls) was not run.',
    );
    expect(received).not.toContain('/real');
    expect(first.tasks.Call!.dryRun).toMatchObject({ source: 'Generated', recordedFrom: null });

    const real = await trellis.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId }, query: { waitSeconds: 60 } },
      body: {},
    });
    expect(real.status).toBe('Completed');
    expect(received).toContain('/real');
    const realTasks = await tasksOf(trellis.admin, workflowId, real.executionId);
    const realOutput = await outputOf(workflowId, real.executionId, realTasks.Call!.id);
    const calls = received.filter((path) => path === '/real').length;

    const recorded = await dryRun(trellis.admin, workflowId);
    const second = await logsByTask(workflowId, recorded.executionId);
    expect(second.logs.Call).toContain(
      `Dry run: output recorded by execution ${real.executionId} (the latest completed real run); Net/Http (effects: calls) was not run.`,
    );
    expect(await outputOf(workflowId, recorded.executionId, second.tasks.Call!.id)).toEqual(
      realOutput,
    );
    expect(second.tasks.Call!.dryRun).toMatchObject({
      source: 'Recorded',
      recordedFrom: real.executionId,
    });
    // A real run's tasks have no plan.
    expect(realTasks.Call!.dryRun).toBeNull();
    expect(received.filter((path) => path === '/real').length).toBe(calls);
  });

  it('refuses mocks of unknown tasks, mocks that do not fit the output schema, and mocks without dryRun (400, nothing started)', async () => {
    const workflowId = await addWorkflow(trellis.admin, orderFlow());
    const unknown = await errorOf(
      dryRun(trellis.admin, workflowId, { mocks: { Fetsh: {} } }),
      TrellisApiError,
    );
    expect(unknown.status).toBe(400);
    expect(unknown.messages.join('\n')).toContain('body.mocks.Fetsh');
    expect(unknown.messages.join('\n')).toContain('Fetsh');

    const misfit = await errorOf(
      dryRun(trellis.admin, workflowId, { mocks: { Write: { rowCount: 'many' } } }),
      TrellisApiError,
    );
    expect(misfit.status).toBe(400);
    expect(misfit.messages.join('\n')).toContain('body.mocks.Write');
    expect(misfit.messages.join('\n')).toContain('Database/PostgreSql');

    const notDry = await errorOf(
      trellis.admin.POST('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
        body: { mocks: { Fetch: {} } },
      }),
      TrellisApiError,
    );
    expect(notDry.status).toBe(400);
    expect(notDry.messages.join('\n')).toContain('body.mocks');

    const runs = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    expect(runs).toEqual([]);
    const [refused] = await trellis.admin.GET('/audit', {
      params: { query: { operation: 'execution.dryRun', pageSize: 1 } },
    });
    expect(refused?.status).toBe(400);
  });
});
