/**
 * Issue 33, replaying a change before publishing it: `POST /workflows/{workflowId}/replay` re-runs
 * a candidate definition as dry runs on the inputs and recorded task outputs of the workflow's
 * latest finished executions and reports where each diverges (another branch, another output,
 * another status, inputs it refuses), without calling out again or storing the candidate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisApiError } from '../../sdk/src/index.js';
import { loopbackAllowed, startTrellis, type Trellis } from '../support/harness.js';
import { errorOf } from '../support/expect-error.js';
import { startRecordingReceiver, type RecordingReceiver } from '../support/recording-receiver.js';
import { addWorkflow, definition } from '../support/engine-support.js';

let trellis: Trellis;
let receiver: RecordingReceiver;
let origin: string;
let received: string[];

beforeAll(async () => {
  receiver = await startRecordingReceiver({ rate: 2 });
  ({ origin, received } = receiver);
  trellis = await startTrellis({ worker: true, config: loopbackAllowed });
});
afterAll(async () => {
  await trellis?.stop();
  await receiver?.close();
});

/** Fetches a rate (HTTP), routes by amount past `threshold`, and computes amount × rate × `factor`. */
function routing(name: string, threshold: number, factor: number, extra: object = {}) {
  return {
    ...definition(
      [
        { name: 'Fetch', type: { plugin: 'Net/Http' }, parameters: { url: `${origin}/rate` } },
        {
          name: 'Big',
          type: { plugin: 'Flow/Log' },
          dependencies: ['Fetch'],
          parameters: { message: 'big' },
          executionCondition: { expression: `Inputs('amount') > ${threshold}` },
        },
        {
          name: 'Small',
          type: { plugin: 'Flow/Log' },
          dependencies: ['Fetch'],
          parameters: { message: 'small' },
          executionCondition: { expression: `Inputs('amount') <= ${threshold}` },
        },
        {
          name: 'Calc',
          type: { plugin: 'Data/Json' },
          dependencies: ['Fetch'],
          parameters: {
            expression: `$[Inputs('amount')] * $[Outputs('Fetch').body.rate] * ${factor}`,
          },
        },
      ],
      {
        inputs: { amount: { type: 'integer', required: true } },
        outputs: { total: "Outputs('Calc').result" },
        ...extra,
      },
    ),
    name,
  };
}

describe('replaying a candidate', () => {
  it('reports per execution the other branch, task output and workflow output, calling nothing again', async () => {
    const name = `Route-${Date.now().toString(36)}`;
    const workflowId = await addWorkflow(trellis.admin, routing(name, 100, 1));
    const runs: string[] = [];
    for (const amount of [50, 500]) {
      const run = await trellis.admin.POST('/workflows/{workflowId}/executions', {
        params: { path: { workflowId }, query: { waitSeconds: 60 } },
        body: { inputs: { amount } },
      });
      expect(run).toMatchObject({ status: 'Completed', outputs: { total: amount * 2 } });
      runs.push(run.executionId);
    }
    const calls = received.length;

    // The threshold moves to 40; the factor doubles.
    const report = await trellis.admin.POST('/workflows/{workflowId}/replay', {
      params: { path: { workflowId } },
      body: { definition: JSON.stringify(routing(name, 40, 2)), last: 5 },
    });

    expect(report).toMatchObject({ workflowId, replayed: 2, diverged: 2 });
    const [latest, earlier] = report.executions;
    expect(latest).toMatchObject({
      executionId: runs[1],
      status: 'Completed',
      replayStatus: 'Completed',
      diverged: true,
    });
    expect(latest!.divergences.map(({ kind, task, path }) => ({ kind, task, path }))).toEqual([
      { kind: 'taskOutput', task: 'Calc', path: 'Calc' },
      { kind: 'output', task: null, path: 'outputs.total' },
    ]);
    expect(latest!.divergences[1]).toMatchObject({ then: 1000, now: 2000 });
    expect(earlier).toMatchObject({ executionId: runs[0], diverged: true });
    expect(
      earlier!.divergences.map(({ kind, task, then, now }) => ({ kind, task, then, now })),
    ).toEqual([
      { kind: 'branch', task: 'Big', then: 'Skipped', now: 'Completed' },
      { kind: 'branch', task: 'Small', then: 'Completed', now: 'Skipped' },
      { kind: 'taskOutput', task: 'Calc', then: { result: 100 }, now: { result: 200 } },
      { kind: 'output', task: null, then: 100, now: 200 },
    ]);
    expect(received.length).toBe(calls);

    // Each replay is a dry run of the candidate; the workflow keeps its revision.
    const replay = await trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
      params: { path: { workflowId, executionId: latest!.replayExecutionId! } },
    });
    expect(replay).toMatchObject({ dryRun: true, revision: null, inputs: { amount: 500 } });
    const stored = await trellis.admin.GET('/workflows/{workflowId}', {
      params: { path: { workflowId } },
    });
    expect(stored.revision).toBe(1);

    // The same definition replayed diverges nowhere; only the latest one with last=1.
    const same = await trellis.admin.POST('/workflows/{workflowId}/replay', {
      params: { path: { workflowId } },
      body: { definition: JSON.stringify(routing(name, 100, 1)), last: 1 },
    });
    expect(same).toMatchObject({ replayed: 1, diverged: 0 });
    expect(same.executions[0]).toMatchObject({ executionId: runs[1], divergences: [] });
  });

  it('reports inputs the candidate refuses as a divergence, and refuses an invalid candidate (400)', async () => {
    const name = `Route-${Date.now().toString(36)}-b`;
    const workflowId = await addWorkflow(trellis.admin, routing(name, 100, 1));
    await trellis.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId }, query: { waitSeconds: 60 } },
      body: { inputs: { amount: 7 } },
    });

    const stricter = routing(name, 100, 1, {
      inputs: {
        amount: { type: 'integer', required: true },
        region: { type: 'string', required: true },
      },
    });
    const report = await trellis.admin.POST('/workflows/{workflowId}/replay', {
      params: { path: { workflowId } },
      body: { definition: JSON.stringify(stricter) },
    });
    expect(report).toMatchObject({ replayed: 1, diverged: 1 });
    expect(report.executions[0]).toMatchObject({ replayExecutionId: null, replayStatus: null });
    expect(report.executions[0]!.divergences[0]).toMatchObject({ kind: 'inputs' });
    expect(report.executions[0]!.divergences[0]!.message).toContain('region');

    const invalid = await errorOf(
      trellis.admin.POST('/workflows/{workflowId}/replay', {
        params: { path: { workflowId } },
        body: { definition: JSON.stringify({ name, tasks: [] }) },
      }),
      TrellisApiError,
    );
    expect(invalid.status).toBe(400);
    expect(invalid.messages.join('\n')).toContain('body.definition');
  });
});
