/**
 * Helpers for the engine's end-to-end tests: store a definition, run it through the API, read
 * back what the API shows about its tasks and logs.
 */
import http from 'node:http';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { expect } from 'vitest';
import { executionWorkflowId } from '#protocol/ids.js';
import type { ExecutionDetail, TrellisClient } from '../../sdk/src/index.js';
import type { Trellis } from './harness.js';

export type Definition = {
  name: string;
  tasks: Array<Record<string, unknown>>;
  [key: string]: unknown;
};

let counter = 0;

/** A definition with a name unique to the test file run. */
export function definition(
  tasks: Definition['tasks'],
  extra: Record<string, unknown> = {},
): Definition {
  counter += 1;
  return { name: `engine-${Date.now().toString(36)}-${counter}`, tasks, ...extra };
}

export const noop = { plugin: 'Flow/NoOp' };
export const delay = (milliseconds: number) => ({
  type: { plugin: 'Flow/Delay' },
  parameters: { milliseconds },
});

/** Stores the definition; its workflow id. */
export async function addWorkflow(client: TrellisClient, def: Definition): Promise<string> {
  const created = await client.POST('/workflows/Add', {
    body: { definition: JSON.stringify(def) },
  });
  return created.id;
}

/** Starts an execution; its id. */
export async function execute(client: TrellisClient, workflowId: string): Promise<string> {
  const started = await client.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
    body: { workflowId },
  });
  return started.executionId;
}

/** Stores a definition and starts it without waiting; the ids of the run. */
export async function start(
  client: TrellisClient,
  def: Definition,
): Promise<{ workflowId: string; executionId: string }> {
  const workflowId = await addWorkflow(client, def);
  const executionId = await execute(client, workflowId);
  return { workflowId, executionId };
}

/** Stores and runs a definition, waits until the run ends. */
export async function run(
  trellis: Trellis,
  def: Definition,
  timeoutMs = 60_000,
): Promise<{ workflowId: string; executionId: string; execution: ExecutionDetail }> {
  const { workflowId, executionId } = await start(trellis.admin, def);
  const execution = await trellis.admin.waitForExecution(workflowId, executionId, { timeoutMs });
  return { workflowId, executionId, execution };
}

/** Waits until the run pauses; its approvals then. */
export async function approvalsOncePaused(
  client: TrellisClient,
  workflowId: string,
  executionId: string,
) {
  await client.waitForExecution(workflowId, executionId, { until: ['Paused'], timeoutMs: 20_000 });
  return client.GET('/workflows/{workflowId}/executions/{executionId}/approvals', {
    params: { path: { workflowId, executionId } },
  });
}

/** Approves or rejects an approval of the run as the client's user, with a reason if given. */
export async function decideApproval(
  client: TrellisClient,
  workflowId: string,
  executionId: string,
  approvalId: string,
  action: 'approve' | 'reject',
  reason?: string,
): Promise<void> {
  await client.POST(
    `/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/${action}`,
    {
      params: { path: { workflowId, executionId, approvalId } },
      ...(reason !== undefined ? { body: { reason } } : {}),
    },
  );
}

export type TaskView = {
  id: string;
  name: string;
  status: string;
  message: string;
  startTime: string | null;
  endTime: string | null;
  /** A dry run's task: its plan (`TaskDryRun`); null for a real run's. */
  dryRun: Record<string, unknown> | null;
};

/** The execution's tasks by name. */
export async function tasksOf(
  client: TrellisClient,
  workflowId: string,
  executionId: string,
): Promise<Record<string, TaskView>> {
  const tasks = await client.GET('/workflows/{workflowId}/executions/{executionId}/tasks', {
    params: { path: { workflowId, executionId } },
  });
  return Object.fromEntries(tasks.map((task) => [task.name, task as TaskView]));
}

/** The task's status by name. */
export async function statuses(
  client: TrellisClient,
  workflowId: string,
  executionId: string,
): Promise<Record<string, string>> {
  const tasks = await tasksOf(client, workflowId, executionId);
  return Object.fromEntries(Object.entries(tasks).map(([name, task]) => [name, task.status]));
}

/** The messages of a task's log entries, oldest first. */
export async function taskLogs(
  client: TrellisClient,
  workflowId: string,
  executionId: string,
  taskExecutionId: string,
): Promise<string[]> {
  const logs = await client.GET(
    '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}/logs',
    { params: { path: { workflowId, executionId, taskExecutionId } } },
  );
  return logs.map((entry) => entry.message);
}

/** The messages of the execution's own log entries, oldest first. */
export async function executionLogs(
  client: TrellisClient,
  workflowId: string,
  executionId: string,
): Promise<string[]> {
  const logs = await client.GET('/workflows/{workflowId}/executions/{executionId}/logs', {
    params: { path: { workflowId, executionId } },
  });
  return logs.map((entry) => entry.message);
}

/** Polls until `check` passes (it throws until then). */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Polls until the run's tasks have (at least) the given statuses. */
export async function untilStatuses(
  client: TrellisClient,
  workflowId: string,
  executionId: string,
  expected: Record<string, string>,
): Promise<void> {
  await eventually(async () =>
    expect(await statuses(client, workflowId, executionId)).toMatchObject(expected),
  );
}

/** Runs `use` with a client of the test's Temporal, closing its connection afterwards. */
export async function withTemporalClient<T>(
  trellis: Trellis,
  use: (client: Client) => Promise<T>,
): Promise<T> {
  const connection = await Connection.connect({ address: trellis.config.Temporal.Address! });
  try {
    return await use(new Client({ connection, namespace: trellis.config.Temporal.Namespace }));
  } finally {
    await connection.close();
  }
}

/** Asserts task A ended before task B started. */
export function expectBefore(a: TaskView, b: TaskView): void {
  expect(a.endTime).not.toBeNull();
  expect(b.startTime).not.toBeNull();
  expect(Date.parse(a.endTime!)).toBeLessThanOrEqual(Date.parse(b.startTime!));
}

/** How a run's task attempts ran, as its Temporal history shows. */
export interface AttemptsInHistory {
  /** Task names of the attempts scheduled as regular activities, in order. */
  regular: string[];
  /** How many attempts ran as local activities (a marker each). */
  local: number;
  /** Timers started (backoff waits, the workflow timeout). */
  timers: number;
}

/** The run's Temporal history once its workflow has closed. */
async function closedRunHistory(trellis: Trellis, executionId: string) {
  return withTemporalClient(trellis, async (client) => {
    const handle = client.workflow.getHandle(executionWorkflowId(executionId));
    // The API shows a run finished before its last workflow task (and the markers of the local
    // activities it ran) is in the history: wait for the workflow to close.
    await handle.result().catch(() => undefined);
    return handle.fetchHistory();
  });
}

const payloadJson = (payload: { data?: Uint8Array | null } | null | undefined): unknown =>
  JSON.parse(Buffer.from(payload?.data ?? []).toString('utf8'));

/** Whether a history event is the marker of a task attempt run as a local activity. */
function isLocalAttempt(event: temporal.api.history.v1.IHistoryEvent): boolean {
  // A local activity's marker says which activity it records in its `data` detail.
  const marker = event.markerRecordedEventAttributes;
  if (marker?.markerName !== 'core_local_activity') return false;
  const data = payloadJson(marker.details?.data?.payloads?.[0]) as { activity_type?: string };
  return data.activity_type === 'runTaskAttempt';
}

/** The activity types of the run's local activities (its markers), in the order they ran. */
export async function localActivitiesInHistory(
  trellis: Trellis,
  executionId: string,
): Promise<string[]> {
  const history = await closedRunHistory(trellis, executionId);
  return (history.events ?? []).flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') return [];
    const data = payloadJson(marker.details?.data?.payloads?.[0]) as { activity_type?: string };
    return data.activity_type ? [data.activity_type] : [];
  });
}

/** Reads the run's Temporal history and tells which attempts ran how. */
export async function attemptsInHistory(
  trellis: Trellis,
  executionId: string,
): Promise<AttemptsInHistory> {
  const history = await closedRunHistory(trellis, executionId);
  const found: AttemptsInHistory = { regular: [], local: 0, timers: 0 };
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'runTaskAttempt') {
      found.regular.push(
        (payloadJson(scheduled.input?.payloads?.[0]) as { taskName: string }).taskName,
      );
    }
    if (isLocalAttempt(event)) found.local += 1;
    if (event.timerStartedEventAttributes) found.timers += 1;
  }
  return found;
}

/** How many local task attempts each workflow task of the run recorded (their markers follow its completion). */
export async function localAttemptsPerWorkflowTask(
  trellis: Trellis,
  executionId: string,
): Promise<number[]> {
  const history = await closedRunHistory(trellis, executionId);
  const counts: number[] = [];
  for (const event of history.events ?? []) {
    if (event.workflowTaskCompletedEventAttributes) counts.push(0);
    else if (isLocalAttempt(event)) counts[counts.length - 1]! += 1;
  }
  return counts;
}

/** A task's log entries as the API shows them (message, level and exception). */
export async function taskLogEntries(
  client: TrellisClient,
  workflowId: string,
  executionId: string,
  taskExecutionId: string,
) {
  return client.GET(
    '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}/logs',
    { params: { path: { workflowId, executionId, taskExecutionId } } },
  );
}

/**
 * Runs `attack` while asking the public `/version` every 100 ms, then once more after it; returns
 * what `attack` returned and the slowest answer in milliseconds. The harness serves the API from
 * this process, so anything that blocks Trellis's event loop shows up here as a slow answer.
 */
export async function whileAskingVersion<T>(
  trellis: Trellis,
  attack: () => Promise<T>,
): Promise<{ result: T; slowestMs: number }> {
  let slowestMs = 0;
  // A connection of its own each time: a socket kept alive across a stall may be reset.
  const ask = async () => {
    const started = performance.now();
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const request = http.get(`${trellis.baseUrl}/version`, { agent: false }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
      });
      request.setTimeout(120_000, () => request.destroy(new Error('/version did not answer')));
      request.on('error', reject);
    });
    expect(status).toBe(200);
    slowestMs = Math.max(slowestMs, performance.now() - started);
  };
  let attacking = true;
  const asking = (async () => {
    while (attacking) {
      await ask();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  let result: T;
  try {
    result = await attack();
  } finally {
    attacking = false;
    await asking;
  }
  await ask();
  return { result, slowestMs };
}

/** An ordinary run of quick built-ins and a short wait, to run beside an attack. */
export function ordinaryRun(): Definition {
  return definition([
    { name: 'Start', type: noop, parameters: { values: [1, 2, 3] } },
    { name: 'Wait', ...delay(1500), dependencies: ['Start'] },
    {
      name: 'Sum',
      type: { plugin: 'Data/Json' },
      dependencies: ['Wait'],
      parameters: { expression: '$sum(values)', input: "$[Outputs('Start')]" },
    },
    {
      name: 'Report',
      type: { plugin: 'Flow/Log' },
      dependencies: ['Sum'],
      parameters: { message: "The sum is $[Outputs('Sum').result]." },
    },
  ]);
}
