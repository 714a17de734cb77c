/**
 * Determinism guard (STYLE.md, Temporal samples): histories of representative runs are committed
 * under `test/histories/<workflow type>/` and replayed against the current workflow code. A
 * change that would break running executions fails here. The folder of the type executions start
 * as now (`executionWorkflowType`) has a history of every scenario; the folders of earlier types
 * keep the histories recorded while executions started as them, replayed until the type goes.
 *
 * A scenario without a recorded history fails the test. `npm run record-histories` (which sets
 * TRELLIS_RECORD_HISTORIES=1) is the only way to write them: it runs every scenario for real and
 * records its history again. Record only after a deliberate, versioned change of the workflow,
 * or for a new scenario, and keep the histories it replaces that took another path: a run of
 * the current type recorded before such a change keeps replaying as
 * `<scenario>.before-<change>.json` (`before-end-in-attempt`: before a run's last attempt recorded
 * its end; `before-prepared-by-api`: before the API prepared the runs it starts).
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Client, Connection } from '@temporalio/client';
import { Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '#platform/logging.js';
import { tracingWorkerOptions } from '#platform/observability/temporal-tracing.js';
import { startTracing } from '#platform/observability/tracing.js';
import { findTemporalCli } from '#platform/temporal/cli.js';
import { executionWorkflowId } from '#protocol/ids.js';
import { executionWorkflowType, firstExecutionWorkflowType } from '#protocol/messages.js';
import { forEachChunkWorkflowId } from '../../workflows-worker/src/workflows/foreach.js';
import { installTemporalRuntime, workflowBundle } from '../../workflows-worker/src/worker.js';
import { LOCAL_ATTEMPTS_PER_TASK } from '../../workflows-worker/src/workflows/local-attempt-budget.js';
import { patches } from '../../workflows-worker/src/workflows/patches.js';
import { builtIntoV2 } from '../../workflows-worker/src/workflows/run-version.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import {
  addWorkflow,
  approvalsOncePaused,
  decideApproval,
  definition,
  delay,
  eventually,
  execute,
  noop,
  start,
  tasksOf,
  untilStatuses,
  type Definition,
} from '../support/engine-support.js';
import { historyFromFile } from './history-file.js';

const historiesRoot = fileURLToPath(new URL('../histories/', import.meta.url));
/** Where the histories of the type executions start as now are recorded. */
const historiesDirectory = path.join(historiesRoot, executionWorkflowType);
const recording = process.env.TRELLIS_RECORD_HISTORIES === '1';

type Scenario = {
  name: string;
  /** Workflows stored first (subworkflows the definition calls), by key; it gets their ids. */
  workflows?: Record<string, () => Definition>;
  definition: (workflowIds: Record<string, string>) => Definition;
  /** Drives the run from outside (approve, reject, cancel) before it ends. */
  drive?: (trellis: Trellis, ids: { workflowId: string; executionId: string }) => Promise<void>;
  /** Once the run has ended, rerun it so; the rerun's history is the one recorded. */
  rerun?: { fromTask?: string; inputs?: Record<string, unknown> };
  /**
   * Once the run has ended, reset it from the Temporal CLI to its first workflow task; the reset
   * run's history is the one recorded.
   */
  resetToStart?: true;
  /**
   * Another run of the same workflow starts first and holds its concurrency slot; the recorded
   * run starts behind it (the definition sets `configuration.concurrency`).
   */
  behindHolder?: true;
  /** Recorded on a Trellis whose worker notifies a webhook of every event (`Notifications`). */
  notify?: true;
  /** The status of the recorded run. */
  expected: string;
  /**
   * The forEach tasks whose chunk workflows (children of the run) are recorded too, each as
   * `<scenario>-<task>-<from>.json`.
   */
  forEachChunks?: Array<{ task: string; from: number }>;
};

/** Starts a run that takes the workflow's concurrency slot, then the run to record. */
async function startBehindHolder(
  trellis: Trellis,
  def: Definition,
): Promise<{ workflowId: string; executionId: string }> {
  const holder = await start(trellis.admin, def);
  await trellis.admin.waitForExecution(holder.workflowId, holder.executionId, {
    until: ['Running'],
    timeoutMs: 20_000,
  });
  const executionId = await execute(trellis.admin, holder.workflowId);
  return { workflowId: holder.workflowId, executionId };
}

/** A workflow whose runs go one at a time: its one task waits `milliseconds`. */
const oneAtATime = (onLimit: string, milliseconds: number) =>
  definition([{ name: 'Work', ...delay(milliseconds) }], {
    configuration: { concurrency: { limit: 1, onLimit } },
  });

async function decideFirstApproval(
  trellis: Trellis,
  { workflowId, executionId }: { workflowId: string; executionId: string },
  action: 'approve' | 'reject',
  reason?: string,
): Promise<void> {
  const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
  await decideApproval(trellis.admin, workflowId, executionId, approval!.id, action, reason);
}

const gate = (name: string, dependencies: string[], approval: Record<string, unknown> = {}) => ({
  name,
  type: noop,
  dependencies,
  manualApproval: { enabled: true, comment: 'Go?', ...approval },
});

const scenarios: Scenario[] = [
  {
    name: 'diamond-with-condition-and-parallelism',
    definition: () =>
      definition(
        [
          { name: 'A', type: noop },
          { name: 'B', ...delay(100), dependencies: ['A'] },
          { name: 'C', ...delay(50), dependencies: ['A'] },
          {
            name: 'Maybe',
            type: noop,
            dependencies: ['A'],
            executionCondition: { expression: "Variables('go') == true" },
          },
          {
            name: 'D',
            type: { plugin: 'Flow/Log' },
            dependencies: ['B', 'C', 'Maybe'],
            parameters: { message: "B waited $[Outputs('B').delayedMilliseconds] ms" },
          },
        ],
        { variables: { go: false }, configuration: { degreeOfParallelism: 1 } },
      ),
    expected: 'Completed',
  },
  {
    name: 'timeouts-retries-and-handlers',
    definition: () =>
      definition([
        {
          name: 'Slow',
          ...delay(5000),
          timeoutMilliseconds: 150,
          errorHandling: {
            strategy: 'Retry',
            retryPolicy: {
              maxRetries: 2,
              backoffStrategy: 'Jitter',
              initialDelayMilliseconds: 100,
            },
          },
        },
        { name: 'Alert', type: noop, runOnFailureOf: ['Slow'] },
        {
          name: 'Optional',
          ...delay(5000),
          timeoutMilliseconds: 100,
          errorHandling: { strategy: 'Skip' },
        },
        {
          name: 'Triggering',
          ...delay(5000),
          timeoutMilliseconds: 100,
          errorHandling: { strategy: 'TriggerTask', triggerTask: 'Cleanup' },
        },
        { name: 'Cleanup', type: noop },
        { name: 'AfterSlow', type: noop, dependencies: ['Slow'] },
        { name: 'AfterOptional', type: noop, dependencies: ['Optional'] },
      ]),
    expected: 'Completed',
  },
  {
    // More quick attempts than one workflow task takes: the run ends its workflow task with a
    // 1 ms timer (the bounded-workflow-tasks patch), then starts the rest.
    name: 'bounded-workflow-tasks',
    definition: () =>
      definition(
        Array.from({ length: LOCAL_ATTEMPTS_PER_TASK + 20 }, (_, index) => ({
          name: `T${index}`,
          type: noop,
        })),
        { configuration: { degreeOfParallelism: 100 } },
      ),
    expected: 'Completed',
  },
  {
    // Quick plugins' attempts are local activities (markers), beside a regular one; a quick
    // task that fails for good takes its error strategy as a regular one would.
    name: 'quick-tasks',
    definition: () =>
      definition([
        { name: 'Start', type: noop, parameters: { values: [1, 2, 3] } },
        {
          name: 'Sum',
          type: { plugin: 'Data/Json' },
          dependencies: ['Start'],
          parameters: { expression: '$sum(values)', input: "$[Outputs('Start')]" },
        },
        {
          name: 'Broken',
          type: { plugin: 'Data/Json' },
          dependencies: ['Start'],
          parameters: { expression: 'orders[', input: {} },
          errorHandling: { strategy: 'Skip' },
        },
        { name: 'Wait', ...delay(50), dependencies: ['Sum'] },
        {
          name: 'Report',
          type: { plugin: 'Flow/Log' },
          dependencies: ['Wait', 'Broken'],
          parameters: { message: "The sum is $[Outputs('Sum').result]." },
        },
      ]),
    expected: 'Completed',
  },
  {
    // A definition with outputs: they are evaluated (a local activity, behind a patch marker)
    // before the run records its end; one that fails fails the run.
    name: 'outputs',
    definition: () =>
      definition(
        [
          { name: 'Start', type: noop, parameters: { values: [1, 2, 3] } },
          {
            name: 'Sum',
            type: { plugin: 'Data/Json' },
            dependencies: ['Start'],
            parameters: { expression: '$sum(values)', input: "$[Outputs('Start')]" },
          },
        ],
        {
          inputs: { factor: { type: 'number', default: 10 } },
          outputs: { total: "Outputs('Sum').result * Inputs('factor')" },
        },
      ),
    expected: 'Completed',
  },
  {
    name: 'outputs-failed',
    definition: () =>
      definition([{ name: 'Start', type: noop, parameters: { text: 'x' } }], {
        outputs: { broken: "Outputs('Start').text - 1" },
      }),
    expected: 'Failed',
  },
  {
    // A rerun from the failed task: the task before it starts out Completed (reused, behind a
    // patch marker) and only the failed task and what follows run.
    name: 'rerun-from-failed-task',
    definition: () =>
      definition(
        [
          { name: 'Prepare', type: noop, parameters: { values: [1, 2, 3] } },
          {
            name: 'Compute',
            type: { plugin: 'Data/Json' },
            dependencies: ['Prepare'],
            parameters: {
              expression: "$[Inputs('expression')]",
              input: "$[Outputs('Prepare')]",
            },
          },
          { name: 'Report', type: noop, dependencies: ['Compute'] },
        ],
        { inputs: { expression: { type: 'string', default: 'values[' } } },
      ),
    rerun: { fromTask: 'Compute', inputs: { expression: '$sum(values)' } },
    expected: 'Completed',
  },
  {
    name: 'approved',
    definition: () => definition([{ name: 'Prepare', type: noop }, gate('Gate', ['Prepare'])]),
    drive: (trellis, ids) => decideFirstApproval(trellis, ids, 'approve'),
    expected: 'Completed',
  },
  {
    name: 'rejected',
    definition: () =>
      definition([gate('Gate', []), { name: 'After', type: noop, dependencies: ['Gate'] }]),
    drive: (trellis, ids) => decideFirstApproval(trellis, ids, 'reject'),
    expected: 'Failed',
  },
  {
    // From here on a run settles each decision against the database before acting on it
    // (behind a patch marker, set when it asks for its first approval).
    name: 'approval-approved-with-reason',
    definition: () =>
      definition([
        { name: 'Prepare', type: noop },
        gate('Gate', ['Prepare']),
        { name: 'After', type: noop, dependencies: ['Gate'] },
      ]),
    drive: (trellis, ids) => decideFirstApproval(trellis, ids, 'approve', 'Checked.'),
    expected: 'Completed',
  },
  {
    // No one decides: the approval's timer fires and its default decision is applied.
    name: 'approval-timeout-approve',
    definition: () =>
      definition([
        gate('Gate', [], { timeoutMilliseconds: 300, onTimeout: 'Approve' }),
        { name: 'After', type: noop, dependencies: ['Gate'] },
      ]),
    expected: 'Completed',
  },
  {
    name: 'approval-timeout-reject',
    definition: () =>
      definition([
        gate('Gate', [], { timeoutMilliseconds: 300, onTimeout: 'Reject' }),
        { name: 'After', type: noop, dependencies: ['Gate'] },
      ]),
    expected: 'Failed',
  },
  {
    // Canceled while an approval that would time out waits: its timer is canceled with the run.
    name: 'approval-canceled-run',
    definition: () =>
      definition([
        gate('Gate', [], { timeoutMilliseconds: 600_000, onTimeout: 'Approve' }),
        { name: 'After', type: noop, dependencies: ['Gate'] },
      ]),
    drive: async (trellis, { workflowId, executionId }) => {
      await approvalsOncePaused(trellis.admin, workflowId, executionId);
      await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
        params: { path: { workflowId, executionId } },
      });
    },
    expected: 'Canceled',
  },
  {
    name: 'canceled',
    definition: () =>
      definition([
        { name: 'Wait', ...delay(60_000) },
        { name: 'After', type: noop, dependencies: ['Wait'] },
      ]),
    drive: async (trellis, { workflowId, executionId }) => {
      await untilStatuses(trellis.admin, workflowId, executionId, { Wait: 'Running' });
      await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
        params: { path: { workflowId, executionId } },
      });
    },
    expected: 'Canceled',
  },
  // From here on runs read in the Temporal UI as in Trellis (the `temporal-ui` patch, set at the
  // start): TrellisStatus upserts, summaries, the workflow failed or canceled as the run ended,
  // decisions as updates.
  {
    name: 'ui-completed',
    definition: () =>
      definition([
        { name: 'Start', type: noop },
        { name: 'Wait', ...delay(20), dependencies: ['Start'] },
        {
          name: 'Optional',
          ...delay(5000),
          timeoutMilliseconds: 100,
          errorHandling: { strategy: 'Skip' },
        },
        { name: 'Report', type: noop, dependencies: ['Wait', 'Optional'] },
      ]),
    expected: 'Completed',
  },
  {
    name: 'ui-failed',
    definition: () =>
      definition([
        {
          name: 'Slow',
          ...delay(5000),
          timeoutMilliseconds: 100,
          errorHandling: {
            strategy: 'Retry',
            retryPolicy: { maxRetries: 1, initialDelayMilliseconds: 50 },
          },
        },
        { name: 'After', type: noop, dependencies: ['Slow'] },
      ]),
    expected: 'Failed',
  },
  {
    name: 'ui-canceled',
    definition: () =>
      definition([
        { name: 'Wait', ...delay(60_000) },
        { name: 'After', type: noop, dependencies: ['Wait'] },
      ]),
    drive: async (trellis, { workflowId, executionId }) => {
      await untilStatuses(trellis.admin, workflowId, executionId, { Wait: 'Running' });
      await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
        params: { path: { workflowId, executionId } },
      });
    },
    expected: 'Canceled',
  },
  {
    name: 'ui-approved-by-update',
    definition: () =>
      definition([
        { name: 'Prepare', type: noop },
        gate('Gate', ['Prepare']),
        { name: 'After', type: noop, dependencies: ['Gate'] },
      ]),
    drive: (trellis, ids) => decideFirstApproval(trellis, ids, 'approve', 'Checked.'),
    expected: 'Completed',
  },
  {
    name: 'ui-rejected-by-update',
    definition: () =>
      definition([gate('Gate', []), { name: 'After', type: noop, dependencies: ['Gate'] }]),
    drive: (trellis, ids) => decideFirstApproval(trellis, ids, 'reject'),
    expected: 'Failed',
  },
  {
    name: 'ui-approval-timeout',
    definition: () =>
      definition([
        gate('Gate', [], { timeoutMilliseconds: 300, onTimeout: 'Approve' }),
        { name: 'After', type: noop, dependencies: ['Gate'] },
      ]),
    expected: 'Completed',
  },
  {
    // Reset from the Temporal CLI once completed: the reset run takes the execution over and
    // runs every task again.
    name: 'ui-reset-to-start',
    definition: () =>
      definition([
        { name: 'First', ...delay(20) },
        { name: 'Second', type: noop, dependencies: ['First'] },
      ]),
    resetToStart: true,
    expected: 'Completed',
  },
  {
    // forEach tasks (the `foreach` patch): the run evaluates the items, runs each chunk of them
    // as a child workflow and records the task's end. Quick items are local activities, the
    // others regular ones; one item is skipped by its condition, and one times out twice (a
    // retry), which fails its task and skips the items not yet run.
    name: 'foreach',
    definition: () =>
      definition([
        { name: 'List', type: noop, parameters: { ids: ['a', 'b', 'c', 'd'] } },
        {
          name: 'Quick',
          type: noop,
          dependencies: ['List'],
          forEach: { items: "Outputs('List').ids", parallelism: 2 },
          executionCondition: { expression: "Item() != 'c'" },
          parameters: { id: '$[Item()]', at: '$[Index()]' },
        },
        {
          name: 'Slow',
          type: { plugin: 'Flow/Delay' },
          dependencies: ['Quick'],
          forEach: { items: "Outputs('Quick')" },
          parameters: { milliseconds: '$[Item() == null ? 2000 : 10]' },
          timeoutMilliseconds: 300,
          errorHandling: {
            strategy: 'Retry',
            retryPolicy: { maxRetries: 1, initialDelayMilliseconds: 10 },
          },
        },
        { name: 'Report', type: noop, dependencies: ['Slow'] },
      ]),
    forEachChunks: [
      { task: 'Quick', from: 0 },
      { task: 'Slow', from: 0 },
    ],
    expected: 'Failed',
  },
  {
    name: 'foreach-canceled',
    definition: () =>
      definition([
        { name: 'Each', ...delay(60_000), forEach: { items: '[1, 2, 3]', parallelism: 2 } },
      ]),
    drive: async (trellis, { workflowId, executionId }) => {
      await untilStatuses(trellis.admin, workflowId, executionId, {
        'Each[0]': 'Running',
        'Each[1]': 'Running',
      });
      await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
        params: { path: { workflowId, executionId } },
      });
    },
    forEachChunks: [{ task: 'Each', from: 0 }],
    expected: 'Canceled',
  },
  {
    // Notifications (patch `notifications`): the approval request and the run's end are
    // delivered by activities beside the run; the approval carries inputs a later task reads.
    name: 'notifications-approval-with-inputs',
    notify: true,
    definition: () =>
      definition([
        gate('Gate', [], { inputs: { amount: { type: 'integer', required: true } } }),
        {
          name: 'After',
          type: noop,
          dependencies: ['Gate'],
          parameters: { amount: "$[Approval('Gate').inputs.amount]" },
        },
      ]),
    drive: async (trellis, { workflowId, executionId }) => {
      const [approval] = await approvalsOncePaused(trellis.admin, workflowId, executionId);
      await trellis.admin.POST(
        '/workflows/{workflowId}/executions/{executionId}/approvals/{approvalId}/approve',
        {
          params: { path: { workflowId, executionId, approvalId: approval!.id } },
          body: { reason: 'Budgeted.', inputs: { amount: 12 } },
        },
      );
    },
    expected: 'Completed',
  },
  {
    name: 'workflow-timeout',
    definition: () =>
      definition(
        [
          { name: 'Wait', ...delay(60_000) },
          { name: 'After', type: noop, dependencies: ['Wait'] },
        ],
        {
          configuration: { timeoutMilliseconds: 300 },
        },
      ),
    expected: 'Failed',
  },
  {
    name: 'concurrency-queued',
    definition: () => oneAtATime('Queue', 500),
    behindHolder: true,
    expected: 'Completed',
  },
  {
    name: 'concurrency-canceled-in-queue',
    definition: () => oneAtATime('Queue', 3000),
    behindHolder: true,
    drive: async (trellis, { workflowId, executionId }) => {
      await eventually(async () => {
        const execution = await trellis.admin.GET(
          '/workflows/{workflowId}/executions/{executionId}',
          { params: { path: { workflowId, executionId } } },
        );
        expect(execution.message).toMatch(/^Waiting for a concurrency slot/);
      });
      await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
        params: { path: { workflowId, executionId } },
      });
    },
    expected: 'Canceled',
  },
  // Subworkflows (the `subworkflows` patch): a child that completes, one that fails and is
  // retried (a new child) before a handler runs, and a parent canceled while its child runs.
  {
    name: 'subworkflows',
    workflows: {
      doubler: () =>
        definition(
          [
            {
              name: 'Double',
              type: { plugin: 'Data/Json' },
              parameters: { expression: 'count * 2', input: { count: "$[Inputs('count')]" } },
            },
          ],
          {
            inputs: { count: { type: 'integer', required: true } },
            outputs: { doubled: "Outputs('Double').result" },
          },
        ),
      broken: () =>
        definition([
          {
            name: 'Break',
            type: { plugin: 'Data/Json' },
            parameters: { expression: '$error("broken")' },
          },
        ]),
    },
    definition: ({ doubler, broken }) =>
      definition([
        { name: 'Call', workflow: doubler, inputs: { count: 21 } },
        {
          name: 'CallBroken',
          workflow: broken,
          errorHandling: {
            strategy: 'Retry',
            retryPolicy: { maxRetries: 1, initialDelayMilliseconds: 10 },
          },
        },
        { name: 'Handle', type: noop, runOnFailureOf: ['CallBroken'] },
        { name: 'After', type: noop, dependencies: ['Call'] },
      ]),
    expected: 'Completed',
  },
  {
    name: 'subworkflow-canceled',
    workflows: {
      waiting: () =>
        definition([
          { name: 'Wait', ...delay(60_000) },
          { name: 'After', type: noop, dependencies: ['Wait'] },
        ]),
    },
    definition: ({ waiting }) =>
      definition([
        { name: 'Call', workflow: waiting },
        { name: 'After', type: noop, dependencies: ['Call'] },
      ]),
    drive: async (trellis, { workflowId, executionId }) => {
      await untilStatuses(trellis.admin, workflowId, executionId, { Call: 'Running' });
      // Let the child start its own task before the cancel reaches it.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
        params: { path: { workflowId, executionId } },
      });
    },
    expected: 'Canceled',
  },
  {
    name: 'concurrency-cancel-oldest',
    definition: () => oneAtATime('CancelOldest', 1000),
    behindHolder: true,
    expected: 'Completed',
  },
  // Children carry their project (the `child-project` patch): a subworkflow's child and a
  // forEach task's chunk start with `TrellisProject` and the project in their details.
  {
    name: 'child-project',
    workflows: { called: () => definition([{ name: 'Inner', type: noop }]) },
    definition: ({ called }) =>
      definition([
        { name: 'Call', workflow: called },
        { name: 'Each', type: noop, forEach: { items: '[1, 2]' }, dependencies: ['Call'] },
      ]),
    expected: 'Completed',
  },
];

const historyFile = (name: string) => path.join(historiesDirectory, `${name}.json`);

/** A history larger than this is committed gzipped (`<name>.json.gz`), as the CLI wrote it. */
const GZIP_ABOVE_BYTES = 256 * 1024;

/** Writes a recorded history: as JSON, or gzipped when large (the other form removed). */
async function writeHistory(name: string, json: string): Promise<void> {
  const large = Buffer.byteLength(json) > GZIP_ABOVE_BYTES;
  await rm(large ? historyFile(name) : `${historyFile(name)}.gz`, { force: true });
  await writeFile(
    large ? `${historyFile(name)}.gz` : historyFile(name),
    large ? gzipSync(json, { level: 9 }) : json,
  );
}

const isRecorded = (name: string) =>
  existsSync(historyFile(name)) || existsSync(`${historyFile(name)}.gz`);

describe.runIf(recording)('recording histories', () => {
  let plain: Trellis;
  let notifying: Trellis | undefined;
  let receiver: http.Server | undefined;
  let connection: Connection;
  let temporalCli: string;

  /** A Trellis notifying a local receiver that accepts every event (started when first needed). */
  async function withNotifications(): Promise<Trellis> {
    if (notifying) return notifying;
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as AddressInfo;
    notifying = await startTrellis({
      worker: true,
      config: {
        Notifications: {
          Webhooks: [
            {
              Url: `http://127.0.0.1:${port}/events`,
              Events: ['ApprovalRequested', 'ExecutionCompleted', 'ExecutionFailed'],
              Secret: `whsec_${Buffer.from('recorded-histories-secret').toString('base64')}`,
            },
          ],
        },
      },
    });
    return notifying;
  }

  beforeAll(async () => {
    plain = await startTrellis({ worker: true });
    const trellis = plain;
    connection = await Connection.connect({ address: trellis.config.Temporal.Address! });
    await mkdir(historiesDirectory, { recursive: true });
    temporalCli = (
      await findTemporalCli({ logger: createLogger({ Level: 'silent' }), env: process.env })
    ).path;
  });
  afterAll(async () => {
    await connection?.close();
    await plain?.stop();
    await notifying?.stop();
    await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
  });

  for (const scenario of scenarios) {
    it(`records ${scenario.name}`, async () => {
      const trellis = scenario.notify ? await withNotifications() : plain;
      const workflowIds: Record<string, string> = {};
      for (const [key, stored] of Object.entries(scenario.workflows ?? {})) {
        workflowIds[key] = await addWorkflow(trellis.admin, stored());
      }
      const first = scenario.behindHolder
        ? await startBehindHolder(trellis, scenario.definition(workflowIds))
        : await start(trellis.admin, scenario.definition(workflowIds));
      const { workflowId } = first;
      await scenario.drive?.(trellis, first);
      let executionId = first.executionId;
      if (scenario.rerun) {
        await trellis.admin.waitForExecution(workflowId, executionId, { timeoutMs: 30_000 });
        const rerun = await trellis.admin.POST(
          '/workflows/{workflowId}/executions/{executionId}/rerun',
          { params: { path: { workflowId, executionId } }, body: scenario.rerun },
        );
        executionId = rerun.executionId;
      }
      let finished = await trellis.admin.waitForExecution(workflowId, executionId, {
        timeoutMs: 30_000,
      });
      const client = new Client({ connection, namespace: trellis.config.Temporal.Namespace });
      const temporalWorkflowId = executionWorkflowId(executionId);
      // Failed and canceled runs fail and cancel their workflow: wait for it to close either way.
      const closed = (runId?: string) =>
        client.workflow
          .getHandle(temporalWorkflowId, runId)
          .result()
          .catch(() => undefined);
      await closed();
      if (scenario.resetToStart) {
        const { runId } = await client.workflow.getHandle(temporalWorkflowId).describe();
        await promisify(execFile)(temporalCli, [
          'workflow',
          'reset',
          '--workflow-id',
          temporalWorkflowId,
          '--type',
          'FirstWorkflowTask',
          '--reason',
          'recording a reset run',
          '--address',
          trellis.config.Temporal.Address!,
          '--namespace',
          trellis.config.Temporal.Namespace,
        ]);
        const resetRun = await eventually(async () => {
          const latest = (await client.workflow.getHandle(temporalWorkflowId).describe()).runId;
          expect(latest).not.toBe(runId);
          return latest;
        });
        await closed(resetRun);
        finished = await trellis.admin.waitForExecution(workflowId, executionId);
      }
      expect(finished.status).toBe(scenario.expected);
      // The CLI writes the standard proto3 JSON that `temporal workflow show` users know.
      const show = async (id: string) =>
        (
          await promisify(execFile)(
            temporalCli,
            [
              'workflow',
              'show',
              '--output',
              'json',
              '--workflow-id',
              id,
              '--address',
              trellis.config.Temporal.Address!,
              '--namespace',
              trellis.config.Temporal.Namespace,
            ],
            { maxBuffer: 64 * 1024 * 1024 },
          )
        ).stdout;
      await writeHistory(scenario.name, await show(temporalWorkflowId));
      if (scenario.forEachChunks) {
        const tasks = await tasksOf(trellis.admin, workflowId, executionId);
        for (const { task, from } of scenario.forEachChunks) {
          const chunk = forEachChunkWorkflowId(tasks[task]!.id, from);
          await client.workflow
            .getHandle(chunk)
            .result()
            .catch(() => undefined);
          await writeHistory(`${scenario.name}-${task}-${from}`, await show(chunk));
        }
      }
    });
  }
});

describe('replaying recorded histories', () => {
  it('has a recorded history of every scenario', () => {
    const missing = scenarios
      .flatMap((scenario) => [
        scenario.name,
        ...(scenario.forEachChunks ?? []).map(
          ({ task, from }) => `${scenario.name}-${task}-${from}`,
        ),
      ])
      .filter((name) => !isRecorded(name));
    expect(
      missing,
      `No recorded history in test/histories/${executionWorkflowType}/ for: ${missing.join(', ')}. ` +
        'Run `npm run record-histories` to record them, and commit the files.',
    ).toEqual([]);
  });

  it('replays every committed history against the current workflow code', async () => {
    const logger = createLogger({ Level: 'silent' });
    expect(await replayFailures({ workflowBundle: await workflowBundle(logger) })).toEqual([]);
  });

  // A patch id is recorded in every history that ran under it: one renamed in the registry
  // would no longer match, and a patch no history ran under has a branch no replay checks. The
  // first type's runs asked for the patches the current type has built in; the current type's
  // runs ask for those added since, and for none it has built in.
  it('recorded histories asked for exactly the patches of the registry, under their ids', async () => {
    const asked = async (type: string) =>
      new Set((await committedHistories(type)).flatMap(({ json }) => patchIds(json)));
    const idsOf = (keys: Iterable<keyof typeof patches>) => [...keys].map((key) => patches[key].id);
    const keys = Object.keys(patches) as Array<keyof typeof patches>;
    expect([...(await asked(firstExecutionWorkflowType))].sort()).toEqual(
      idsOf(builtIntoV2).sort(),
    );
    expect([...(await asked(executionWorkflowType))].sort()).toEqual(
      idsOf(keys.filter((key) => !builtIntoV2.has(key))).sort(),
    );
  });

  // A clean run says `Running` from its start attributes and upserts `TrellisStatus` only when
  // it changes: never `Running` first.
  it('runs of the current type upsert no status they started with', async () => {
    const histories = await committedHistories(executionWorkflowType);
    expect(
      histories
        .filter(({ json }) => statusUpserts(json)[0] === 'Running')
        .map(({ workflowId }) => workflowId),
    ).toEqual([]);
  });

  // A run whose last task completes it records its end in that task's attempt; one recorded
  // before wrote it in a bookkeeping activity after, and both replay.
  it('runs of the current type record their end with their last task, and earlier ones replay', async () => {
    const histories = new Map(
      (await committedHistories(executionWorkflowType)).map(({ workflowId, json }) => [
        workflowId.slice(executionWorkflowType.length + 1),
        json,
      ]),
    );
    // Four quick attempts (one of them skips its task after a failure), then the end.
    const attempts = Array.from({ length: 4 }, () => 'runTaskAttempt');
    expect(localActivities(histories.get('quick-tasks'))).toEqual(attempts);
    expect(localActivities(histories.get('quick-tasks.before-prepared-by-api'))).toEqual([
      'prepareExecution',
      ...attempts,
    ]);
    expect(localActivities(histories.get('quick-tasks.before-end-in-attempt'))).toEqual([
      'prepareExecution',
      ...attempts,
      'recordProgress',
    ]);
  });

  // A run the API prepared starts on its tasks: no prepare activity. The runs it does not
  // prepare (a reset, one in line for a slot, one with subworkflow or forEach tasks, a child)
  // still prepare themselves, and the runs recorded before it replay as they prepared.
  it('runs the API prepared ask for no prepare activity; the others and earlier ones still do', async () => {
    const histories = await committedHistories(executionWorkflowType);
    const name = (workflowId: string) => workflowId.slice(executionWorkflowType.length + 1);
    const preparing = histories
      .filter(({ json }) => localActivities(json).includes('prepareExecution'))
      .map(({ workflowId }) => name(workflowId))
      .filter((scenario) => !scenario.includes('.before-'));
    expect(preparing.sort()).toEqual([
      'child-project',
      'concurrency-cancel-oldest',
      'concurrency-canceled-in-queue',
      'concurrency-queued',
      'foreach',
      'foreach-canceled',
      'subworkflow-canceled',
      'subworkflows',
      'ui-reset-to-start',
    ]);
    const before = histories.filter(({ workflowId }) =>
      workflowId.includes('.before-prepared-by-api'),
    );
    expect(before.length).toBeGreaterThan(0);
    for (const { json } of before) expect(localActivities(json)).toContain('prepareExecution');
  });

  // Tracing (Telemetry.OtlpEndpoint) runs the workflows with Temporal's OpenTelemetry
  // interceptors in their bundle: they add spans and headers, never commands, so runs started
  // with tracing off replay with it on (and back).
  it('replays every committed history with the tracing interceptors in the bundle too', async () => {
    const logger = createLogger({ Level: 'silent' });
    const tracing = startTracing(
      { OtlpEndpoint: 'http://127.0.0.1:1', ServiceName: 'replay', SampleRatio: 1 },
      { role: 'worker', version: '0', logger },
    )!;
    try {
      const { sinks, interceptors } = tracingWorkerOptions(tracing);
      const failures = await replayFailures({
        workflowBundle: await workflowBundle(logger, { traced: true }),
        sinks,
        interceptors,
      });
      expect(failures).toEqual([]);
    } finally {
      await tracing.shutdown();
    }
  });
});

/**
 * Every committed history (of one workflow type's folder, or of all): the workflow id it replays
 * as (its folder and name), and its file's JSON.
 */
async function committedHistories(
  type?: string,
): Promise<Array<{ workflowId: string; json: unknown }>> {
  const folders = type
    ? [type]
    : (await readdir(historiesRoot, { withFileTypes: true }))
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name);
  const histories = (
    await Promise.all(
      folders.map(async (folder) => {
        const directory = path.join(historiesRoot, folder);
        const files = (await readdir(directory)).filter((file) => /\.json(\.gz)?$/.test(file));
        return Promise.all(
          files.map(async (file) => {
            const bytes = await readFile(path.join(directory, file));
            const json = file.endsWith('.gz') ? gunzipSync(bytes) : bytes;
            return {
              workflowId: `${folder}/${file.replace(/\.json(\.gz)?$/, '')}`,
              json: JSON.parse(json.toString('utf8')) as unknown,
            };
          }),
        );
      }),
    )
  ).flat();
  expect(histories.length).toBeGreaterThan(0);
  return histories;
}

type HistoryEvent = {
  upsertWorkflowSearchAttributesEventAttributes?: {
    searchAttributes?: { indexedFields?: Record<string, { data: string }> };
  };
};

/** The values a history's run upserted `TrellisStatus` to, in order. */
function statusUpserts(json: unknown): string[] {
  const { events } = json as { events: HistoryEvent[] };
  return events.flatMap(({ upsertWorkflowSearchAttributesEventAttributes: upsert }) => {
    const field = upsert?.searchAttributes?.indexedFields?.TrellisStatus;
    return field ? [JSON.parse(Buffer.from(field.data, 'base64').toString('utf8')) as string] : [];
  });
}

/** The JSON payloads of one detail of a history file's markers of one name, in order. */
function markerPayloads(json: unknown, markerName: string, detail: string): unknown[] {
  const { events } = json as {
    events: Array<{
      markerRecordedEventAttributes?: {
        markerName: string;
        details: Record<string, { payloads: Array<{ data: string }> }>;
      };
    }>;
  };
  return events.flatMap(({ markerRecordedEventAttributes: marker }) =>
    marker?.markerName === markerName
      ? (marker.details[detail]?.payloads ?? []).map(
          ({ data }) => JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as unknown,
        )
      : [],
  );
}

/** The activity types of a history file's local activities (their markers), in order. */
function localActivities(json: unknown): string[] {
  return markerPayloads(json, 'core_local_activity', 'data').flatMap((data) => {
    const type = (data as { activity_type?: string }).activity_type;
    return type ? [type] : [];
  });
}

/** The ids of the patches a history file's run asked for (its `core_patch` markers). */
function patchIds(json: unknown): string[] {
  return markerPayloads(json, 'core_patch', 'patch-data').map(
    (data) => (data as { id: string }).id,
  );
}

/** Replays every committed history with `options`; a line per history that failed. */
async function replayFailures(options: ReplayWorkerOptions): Promise<string[]> {
  const histories = (await committedHistories()).map(({ workflowId, json }) => ({
    workflowId,
    history: historyFromFile(json),
  }));
  await installTemporalRuntime(createLogger({ Level: 'silent' }));
  const failures: string[] = [];
  for await (const result of Worker.runReplayHistories(options, histories)) {
    if (result.error) failures.push(`${result.workflowId}: ${String(result.error)}`);
  }
  return failures;
}
