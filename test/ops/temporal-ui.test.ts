/**
 * What an operator sees of Trellis runs in the Temporal UI (issue 12), read back through the
 * Temporal client as the UI reads it (describe, history, queries, visibility) and through the
 * Temporal CLI as an operator drives it: the Temporal status matches Trellis's, activities and
 * the run carry summaries in Trellis's words, `TrellisStatus` is current, a Paused run names what
 * it waits for, a decision sent as an update from the CLI is recorded once with its decider, and
 * a reset run runs its tasks again and records them.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  Client,
  Connection,
  WorkflowFailedError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '#platform/logging.js';
import { findTemporalCli } from '#platform/temporal/cli.js';
import { executionWorkflowId, scheduleId } from '#protocol/ids.js';
import { pendingApprovalsQuery } from '#protocol/messages.js';
import {
  TrellisExecutionId,
  TrellisStatus,
  TrellisWorkflowName,
} from '#protocol/search-attributes.js';
import { isMissingUpdateHandler } from '#application/approvals/decide-approval.js';
import { loopbackAllowed, startTrellis, type Trellis } from '../support/harness.js';
import {
  addWorkflow,
  approvalsOncePaused,
  definition,
  delay,
  eventually,
  executionLogs,
  noop,
  run,
  start,
  taskLogs,
  tasksOf,
  untilStatuses,
  type Definition,
} from '../support/engine-support.js';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

let trellis: Trellis;
let server: ScriptedServer;
let connection: Connection;
let client: Client;
let temporalCli: string;

beforeAll(async () => {
  [trellis, server] = await Promise.all([
    startTrellis({ worker: true, config: loopbackAllowed }),
    startScriptedServer(),
  ]);
  connection = await Connection.connect({ address: trellis.config.Temporal.Address! });
  client = new Client({ connection, namespace: trellis.config.Temporal.Namespace });
  temporalCli = (
    await findTemporalCli({ logger: createLogger({ Level: 'silent' }), env: process.env })
  ).path;
});
afterAll(async () => {
  await connection?.close();
  await trellis?.stop();
  await server?.close();
});

/** Runs the Temporal CLI against the test server, as an operator would; its stdout. */
async function temporalCommand(args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(temporalCli, [
    ...args,
    '--address',
    trellis.config.Temporal.Address!,
    '--namespace',
    trellis.config.Temporal.Namespace,
  ]);
  return stdout;
}

const handleOf = (executionId: string, runId?: string) =>
  client.workflow.getHandle(executionWorkflowId(executionId), runId);

/** The run's Temporal history once its workflow has closed. */
async function closedHistory(executionId: string, runId?: string): Promise<HistoryEvent[]> {
  const handle = handleOf(executionId, runId);
  await handle.result().catch(() => undefined);
  return (await handle.fetchHistory()).events ?? [];
}

const decode = (payload: { data?: Uint8Array | null } | null | undefined): unknown =>
  payload?.data ? JSON.parse(Buffer.from(payload.data).toString('utf8')) : undefined;

/**
 * The summaries of the run's task attempts, as the UI's timeline shows them: regular activities
 * and local ones (markers) alike.
 */
function attemptSummaries(events: HistoryEvent[]): string[] {
  const summaries: string[] = [];
  for (const event of events) {
    const summary = decode(event.userMetadata?.summary) as string | undefined;
    const scheduled = event.activityTaskScheduledEventAttributes;
    const marker = event.markerRecordedEventAttributes;
    const local =
      marker?.markerName === 'core_local_activity' &&
      (decode(marker.details?.data?.payloads?.[0]) as { activity_type?: string }).activity_type ===
        'runTaskAttempt';
    if (scheduled?.activityType?.name === 'runTaskAttempt' || local) summaries.push(summary!);
  }
  return summaries;
}

/** The run's current details (the UI's "Current Details"), read as the UI reads them. */
async function currentDetails(executionId: string): Promise<string> {
  const metadata = await handleOf(executionId).query<{ currentDetails?: string }>(
    '__temporal_workflow_metadata',
  );
  return metadata.currentDetails ?? '';
}

async function executionRow(executionId: string) {
  return trellis.db
    .selectFrom('workflowExecution')
    .select(['status', 'message'])
    .where('id', '=', executionId)
    .executeTakeFirstOrThrow();
}

let pathCounter = 0;

/** A Net/Http task against a fresh path of the scripted server answering `statuses` in turn. */
function httpTask(name: string, statuses: number[], extra: Record<string, unknown> = {}) {
  const path = `/ui-${++pathCounter}`;
  server.script(
    path,
    statuses.map((status) => ({ status, body: { answered: status } })),
  );
  return {
    name,
    type: { plugin: 'Net/Http' },
    parameters: { url: `${server.url}${path}` },
    ...extra,
  };
}

describe('a run in the Temporal UI', () => {
  it('completes in Temporal too, with its summary, details, status attribute and task summaries', async () => {
    const def = definition([
      { name: 'Fetch', ...delay(20) },
      { name: 'Sum', type: noop, dependencies: ['Fetch'] },
    ]);
    const { workflowId, executionId, execution } = await run(trellis, def);
    expect(execution.status).toBe('Completed');

    // The run records its end, then completes the workflow task that closes it.
    const events = await closedHistory(executionId);
    const description = await handleOf(executionId).describe();
    expect(description.status.name).toBe('COMPLETED');
    expect(await description.staticSummary()).toBe(`Trellis workflow **${def.name}**`);
    const details = await description.staticDetails();
    expect(details).toContain(`Workflow id: ${workflowId}`);
    expect(details).toContain(`Execution id: ${executionId}`);
    expect(description.typedSearchAttributes.get(TrellisStatus)).toBe('Completed');
    expect(description.typedSearchAttributes.get(TrellisExecutionId)).toBe(executionId);
    expect(description.typedSearchAttributes.get(TrellisWorkflowName)).toBe(def.name);

    // The delay is a regular activity, the no-op a local one (a marker): both say what they run.
    expect(attemptSummaries(events)).toEqual(['Task Fetch: attempt 1', 'Task Sum: attempt 1']);
    const result = events.at(-1)?.workflowExecutionCompletedEventAttributes?.result;
    expect(decode(result?.payloads?.[0])).toMatchObject({ executionId, status: 'Completed' });
  });

  it('fails in Temporal with the Trellis message, once the failure is recorded, and names each attempt', async () => {
    const def = definition([
      httpTask('Call', [503], {
        errorHandling: {
          strategy: 'Retry',
          retryPolicy: { maxRetries: 1, initialDelayMilliseconds: 50 },
        },
      }),
      { name: 'After', type: noop, dependencies: ['Call'] },
    ]);
    const { executionId, execution } = await run(trellis, def);
    expect(execution.status).toBe('Failed');
    const row = await executionRow(executionId);
    expect(row.status).toBe('Failed');

    const error = await handleOf(executionId)
      .result()
      .then(
        () => null,
        (failed: unknown) => failed,
      );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause).toMatchObject({ type: 'ExecutionFailed', nonRetryable: true });
    expect((cause as ApplicationFailure).message).toBe(row.message);
    expect(row.message).toMatch(/Call/);

    const description = await handleOf(executionId).describe();
    expect(description.status.name).toBe('FAILED');
    expect(description.typedSearchAttributes.get(TrellisStatus)).toBe('Failed');
    const events = await closedHistory(executionId);
    expect(attemptSummaries(events)).toEqual([
      'Task Call: attempt 1 of 2',
      'Task Call: attempt 2 of 2',
    ]);
    // The backoff between the two is a timer that says what it waits for.
    const timers = events.flatMap((event) =>
      event.timerStartedEventAttributes ? [decode(event.userMetadata?.summary)] : [],
    );
    expect(timers).toEqual(['Task Call: back off before attempt 2']);
    // The end was written to PostgreSQL (a local activity's marker) before the workflow failed.
    const lastMarker = events.findLastIndex((event) => event.markerRecordedEventAttributes);
    const failedAt = events.findIndex((event) => event.workflowExecutionFailedEventAttributes);
    expect(lastMarker).toBeGreaterThan(-1);
    expect(failedAt).toBeGreaterThan(lastMarker);
  });

  it('is canceled in Temporal when canceled through the API, and says who canceled', async () => {
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([
        { name: 'Wait', ...delay(60_000) },
        { name: 'After', type: noop, dependencies: ['Wait'] },
      ]),
    );
    await untilStatuses(trellis.admin, workflowId, executionId, { Wait: 'Running' });
    expect((await handleOf(executionId).describe()).typedSearchAttributes.get(TrellisStatus)).toBe(
      'Running',
    );
    await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path: { workflowId, executionId } },
    });
    const error = await handleOf(executionId)
      .result()
      .then(
        () => null,
        (failed: unknown) => failed,
      );
    expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    const description = await handleOf(executionId).describe();
    expect(description.status.name).toBe('CANCELLED');
    expect(description.typedSearchAttributes.get(TrellisStatus)).toBe('Canceled');
    expect(await executionRow(executionId)).toEqual({
      status: 'Canceled',
      message: 'Canceled by admin.',
    });
    expect((await executionLogs(trellis.admin, workflowId, executionId)).at(-1)).toBe(
      'Execution canceled: Canceled by admin.',
    );
  });

  it('is canceled in Temporal when an operator cancels it there, and Canceled in Trellis', async () => {
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([{ name: 'Wait', ...delay(60_000) }]),
    );
    await untilStatuses(trellis.admin, workflowId, executionId, { Wait: 'Running' });
    await temporalCommand([
      'workflow',
      'cancel',
      '--workflow-id',
      executionWorkflowId(executionId),
    ]);
    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 20_000,
    });
    expect(finished.status).toBe('Canceled');
    await handleOf(executionId)
      .result()
      .catch(() => undefined);
    const description = await handleOf(executionId).describe();
    expect(description.status.name).toBe('CANCELLED');
    expect(description.typedSearchAttributes.get(TrellisStatus)).toBe('Canceled');
  });

  it('canceled by the cancel signal alone ends Canceled in Trellis at once, and closes Completed in Temporal', async () => {
    const { workflowId, executionId } = await start(
      trellis.admin,
      definition([{ name: 'Wait', ...delay(60_000) }]),
    );
    await untilStatuses(trellis.admin, workflowId, executionId, { Wait: 'Running' });
    const signaledAt = Date.now();
    await temporalCommand([
      'workflow',
      'signal',
      '--workflow-id',
      executionWorkflowId(executionId),
      '--name',
      'cancel',
      '--input',
      JSON.stringify({ requestedBy: 'ops-bob' }),
    ]);
    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 20_000,
    });
    expect(finished.status).toBe('Canceled');
    expect(await executionRow(executionId)).toEqual({
      status: 'Canceled',
      message: 'Canceled by ops-bob.',
    });
    // Temporal closes a workflow as Canceled only when asked to: the run waited for that.
    const outcome = await handleOf(executionId).result();
    expect(Date.now() - signaledAt).toBeGreaterThanOrEqual(10_000);
    expect(outcome).toMatchObject({ status: 'Canceled', message: 'Canceled by ops-bob.' });
    const description = await handleOf(executionId).describe();
    expect(description.status.name).toBe('COMPLETED');
    expect(description.typedSearchAttributes.get(TrellisStatus)).toBe('Canceled');
  });

  it('started by a TimeBased trigger says which workflow and trigger, in the schedule and the run', async () => {
    const def = definition([{ name: 'Only', type: noop }]);
    const workflowId = await addWorkflow(trellis.admin, def);
    const { triggerId } = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
      params: { path: { workflowId } },
      // Once a year, paused: the test fires it by hand.
      body: {
        workflowId,
        type: 'TimeBased',
        status: 'DeActive',
        properties: { cron: '0 0 1 1 *' },
      },
    });
    const schedule = client.schedule.getHandle(scheduleId(triggerId));
    const { action } = await schedule.describe();
    const summary = `Trellis workflow **${def.name}** (trigger ${triggerId})`;
    expect(action.staticSummary).toBe(summary);
    expect(action.staticDetails).toContain(`Trigger id: ${triggerId}`);
    await schedule.trigger();
    const [listed] = await eventually(async () => {
      const executions = await trellis.admin.GET('/workflows/{workflowId}/executions', {
        params: { path: { workflowId } },
      });
      expect(executions).toHaveLength(1);
      return executions;
    });
    const executionId = listed!.id;
    await trellis.admin.waitForExecution(workflowId, executionId, { timeoutMs: 20_000 });
    const row = await trellis.db
      .selectFrom('workflowExecution')
      .select('temporalWorkflowId')
      .where('id', '=', executionId)
      .executeTakeFirstOrThrow();
    const handle = client.workflow.getHandle(row.temporalWorkflowId);
    await handle.result();
    const description = await handle.describe();
    expect(await description.staticSummary()).toBe(summary);
    expect(description.typedSearchAttributes.get(TrellisExecutionId)).toBe(executionId);
    expect(description.typedSearchAttributes.get(TrellisStatus)).toBe('Completed');
  });
});

describe('a run waiting for people, decided from the Temporal CLI', () => {
  const gated = (): Definition =>
    definition([
      { name: 'Prepare', type: noop },
      {
        name: 'Gate',
        type: noop,
        dependencies: ['Prepare'],
        manualApproval: { enabled: true, comment: 'Check the numbers' },
      },
      { name: 'Publish', type: noop, dependencies: ['Gate'] },
    ]);

  it('is listed by TrellisStatus = "Paused", names the approval, and records the CLI decision once', async () => {
    const { workflowId, executionId } = await start(trellis.admin, gated());
    const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
    const temporalWorkflowId = executionWorkflowId(executionId);

    // Written to PostgreSQL first, then upserted as the workflow task completes.
    await eventually(async () => {
      const description = await handleOf(executionId).describe();
      expect(description.status.name).toBe('RUNNING');
      expect(description.typedSearchAttributes.get(TrellisStatus)).toBe('Paused');
    });
    // The saved view an operator keeps: what waits for people.
    await eventually(async () => {
      const listed: string[] = [];
      for await (const found of client.workflow.list({
        query: `TrellisStatus = "Paused" AND TrellisExecutionId = "${executionId}"`,
      })) {
        listed.push(found.workflowId);
      }
      expect(listed).toEqual([temporalWorkflowId]);
    });
    const details = await currentDetails(executionId);
    expect(details).toContain('**Paused**');
    expect(details).toContain(`task **Gate**: approval \`${approval!.id}\``);
    expect(await handleOf(executionId).query(pendingApprovalsQuery)).toEqual([
      { approvalId: approval!.id, taskName: 'Gate' },
    ]);

    // Refused without a trace: an approval the run does not wait for, input that is no decision.
    const refused = (input: string) =>
      temporalCommand([
        'workflow',
        'update',
        'execute',
        '--workflow-id',
        temporalWorkflowId,
        '--name',
        'approve',
        '--input',
        input,
      ]);
    await expect(
      refused(JSON.stringify({ approvalId: '6d1f5f0e-0000-4000-8000-000000000000' })),
    ).rejects.toThrow(/is not one this execution waits for/);
    await expect(refused(JSON.stringify({ decidedBy: 'ops-alice' }))).rejects.toThrow(
      /approvalId: required/,
    );

    const answer = await refused(
      JSON.stringify({
        approvalId: approval!.id,
        decidedBy: 'ops-alice',
        reason: 'Numbers match.',
      }),
    );
    expect(answer).toContain('Approved');
    const finished = await trellis.admin.waitForExecution(workflowId, executionId, {
      timeoutMs: 20_000,
    });
    expect(finished.status).toBe('Completed');
    const [decided] = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/approvals',
      { params: { path: { workflowId, executionId } } },
    );
    expect(decided).toMatchObject({
      id: approval!.id,
      status: 'Approved',
      decidedBy: 'ops-alice',
      reason: 'Numbers match.',
    });
    const gate = (await tasksOf(trellis.admin, workflowId, executionId)).Gate!;
    expect(await taskLogs(trellis.admin, workflowId, executionId, gate.id)).toEqual([
      `Waiting for approval ${approval!.id}: Check the numbers`,
      'Approved by ops-alice: Numbers match.',
      'Started.',
      expect.stringMatching(/^Completed in/),
    ]);

    // Once decided, a second decision is refused and changes nothing: through the API too.
    await expect(
      temporalCommand([
        'workflow',
        'update',
        'execute',
        '--workflow-id',
        temporalWorkflowId,
        '--name',
        'reject',
        '--input',
        JSON.stringify({ approvalId: approval!.id }),
      ]),
    ).rejects.toThrow();
    const history = await closedHistory(executionId);
    const updates = history.filter((event) => event.workflowExecutionUpdateAcceptedEventAttributes);
    expect(updates).toHaveLength(1);
    expect((await handleOf(executionId).describe()).typedSearchAttributes.get(TrellisStatus)).toBe(
      'Completed',
    );
    const [still] = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/approvals',
      { params: { path: { workflowId, executionId } } },
    );
    expect(still).toMatchObject({ status: 'Approved', decidedBy: 'ops-alice' });
  });

  it('refuses an update it has no handler for the way the API recognises (runs from before updates)', async () => {
    const { workflowId, executionId } = await start(trellis.admin, gated());
    const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
    const missing = await handleOf(executionId)
      .executeUpdate('approveLater', { args: [{ approvalId: approval!.id }] })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(isMissingUpdateHandler(missing)).toBe(true);
    const refused = await handleOf(executionId)
      .executeUpdate('approve', { args: [{ approvalId: 'not-an-approval' }] })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(isMissingUpdateHandler(refused)).toBe(false);
    await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path: { workflowId, executionId } },
    });
  });

  it('takes the API decision as an update too, and a nameless CLI rejection as temporal', async () => {
    const byApi = await start(trellis.admin, gated());
    const [first] = await approvalsOncePaused(trellis.admin, byApi.workflowId, byApi.executionId);
    await trellis.admin.POST(
      '/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/approve',
      { params: { path: { ...byApi, approvalId: first!.id } } },
    );
    const accepted = (await closedHistory(byApi.executionId)).flatMap((event) => {
      const attributes = event.workflowExecutionUpdateAcceptedEventAttributes;
      return attributes ? [attributes.acceptedRequest?.input?.name] : [];
    });
    expect(accepted).toEqual(['approve']);

    const byCli = await start(trellis.admin, gated());
    const [second] = await approvalsOncePaused(trellis.admin, byCli.workflowId, byCli.executionId);
    await temporalCommand([
      'workflow',
      'update',
      'execute',
      '--workflow-id',
      executionWorkflowId(byCli.executionId),
      '--name',
      'reject',
      '--input',
      JSON.stringify({ approvalId: second!.id }),
    ]);
    const finished = await trellis.admin.waitForExecution(byCli.workflowId, byCli.executionId, {
      timeoutMs: 20_000,
    });
    expect(finished.status).toBe('Failed');
    const [rejected] = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/approvals',
      { params: { path: byCli } },
    );
    expect(rejected).toMatchObject({ status: 'Rejected', decidedBy: 'temporal', reason: null });
    await closedHistory(byCli.executionId);
    expect((await handleOf(byCli.executionId).describe()).status.name).toBe('FAILED');
  });
});

describe('a run reset from the Temporal CLI', () => {
  /** Waits until the workflow's latest run is not `runId`; that run's id. */
  async function nextRun(executionId: string, runId: string): Promise<string> {
    return eventually(async () => {
      const latest = (await handleOf(executionId).describe()).runId;
      expect(latest).not.toBe(runId);
      return latest;
    });
  }

  it('to its first workflow task runs every task again and records the new outcome', async () => {
    const def = definition([
      httpTask('Fetch', [500, 200]),
      { name: 'After', type: noop, dependencies: ['Fetch'] },
    ]);
    const { workflowId, executionId, execution } = await run(trellis, def);
    expect(execution.status).toBe('Failed');
    const before = await tasksOf(trellis.admin, workflowId, executionId);
    expect(before.Fetch?.status).toBe('Failed');
    expect(before.After?.status).toBe('Skipped');
    await closedHistory(executionId);
    const firstRun = (await handleOf(executionId).describe()).runId;

    await temporalCommand([
      'workflow',
      'reset',
      '--workflow-id',
      executionWorkflowId(executionId),
      '--type',
      'FirstWorkflowTask',
      '--reason',
      'the remote service is back',
    ]);
    const resetRun = await nextRun(executionId, firstRun);
    const outcome = await handleOf(executionId, resetRun).result();
    expect(outcome).toMatchObject({ executionId, status: 'Completed' });

    expect(await executionRow(executionId)).toMatchObject({ status: 'Completed' });
    const after = await tasksOf(trellis.admin, workflowId, executionId);
    expect(after.Fetch).toMatchObject({ status: 'Completed' });
    expect(after.After).toMatchObject({ status: 'Completed' });
    expect(Date.parse(after.Fetch!.startTime!)).toBeGreaterThan(Date.parse(before.Fetch!.endTime!));
    const fetched = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}',
      { params: { path: { workflowId, executionId, taskExecutionId: after.Fetch!.id } } },
    );
    expect(fetched.output).toMatchObject({ status: 200, body: { answered: 200 } });

    // Both runs' entries are in the log, the reset between them.
    const logs = await executionLogs(trellis.admin, workflowId, executionId);
    const reset = logs.findIndex((message) => message.startsWith('Reset in Temporal: run '));
    expect(reset).toBeGreaterThan(
      logs.indexOf(logs.find((m) => m.startsWith('Execution failed'))!),
    );
    expect(logs.at(-1)).toMatch(/^Execution completed/);
    expect(await taskLogs(trellis.admin, workflowId, executionId, after.Fetch!.id)).toEqual([
      'Started.',
      expect.stringMatching(/^Failed: /),
      'Started.',
      expect.stringMatching(/^Completed in/),
    ]);
    const description = await handleOf(executionId).describe();
    expect(description.status.name).toBe('COMPLETED');
    expect(description.typedSearchAttributes.get(TrellisStatus)).toBe('Completed');
  });

  it('to a later event runs only the tasks after it again, keeping what came before', async () => {
    const def = definition([
      { name: 'First', ...delay(10) },
      httpTask('Second', [500, 200], { dependencies: ['First'] }),
      { name: 'Third', type: noop, dependencies: ['Second'] },
    ]);
    const { workflowId, executionId, execution } = await run(trellis, def);
    expect(execution.status).toBe('Failed');
    const before = await tasksOf(trellis.admin, workflowId, executionId);
    const events = await closedHistory(executionId);
    const firstRun = (await handleOf(executionId).describe()).runId;

    // The workflow task that followed First's completion: the one that started Second.
    const firstDone = events.findIndex((event) => event.activityTaskCompletedEventAttributes);
    const resetPoint = events
      .slice(firstDone)
      .find((event) => event.workflowTaskCompletedEventAttributes)!.eventId;
    await temporalCommand([
      'workflow',
      'reset',
      '--workflow-id',
      executionWorkflowId(executionId),
      '--event-id',
      String(resetPoint),
      '--reason',
      'retry from Second',
    ]);
    const resetRun = await nextRun(executionId, firstRun);
    expect(await handleOf(executionId, resetRun).result()).toMatchObject({ status: 'Completed' });

    const after = await tasksOf(trellis.admin, workflowId, executionId);
    expect(after.First).toEqual(before.First); // done before the reset point: not run again
    expect(after.Second).toMatchObject({ status: 'Completed' });
    expect(after.Third).toMatchObject({ status: 'Completed' });
    expect(await taskLogs(trellis.admin, workflowId, executionId, after.First!.id)).toEqual([
      'Started.',
      expect.stringMatching(/^Completed in/),
    ]);
    expect(await executionRow(executionId)).toMatchObject({ status: 'Completed' });
  });
});
