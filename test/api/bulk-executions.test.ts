/**
 * `POST /executions/rerun` and `POST /executions/cancel` through the real stack: a preview
 * changes nothing; a rerun on the revision each ran against one on the latest (the workflow fixed
 * between the failure and the rerun); a cancel of running executions; the selection's bounds and
 * 400s; a project's starts a minute stopping a rerun part-way (429 saying what was done); another
 * project's ids skipped as not found; idempotency and the audit entry.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExecutionWithTasks } from '#store/execution-repository.js';
import type { TrellisClient } from '../../sdk/src/index.js';
import { basicAs, clientIn, startTrellis, type Trellis } from '../support/harness.js';
import {
  addWorkflow,
  definition,
  delay,
  untilStatuses,
  type Definition,
} from '../support/engine-support.js';
import { apiError, expectFailure } from './api-error.js';

let trellis: Trellis;
/** The admin in a project of this file's own, so that its filters see only these runs. */
let client: TrellisClient;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
  await trellis.admin.POST('/projects', { body: { name: 'bulk' } });
  client = clientIn(trellis, basicAs('admin'), 'bulk');
}, 120_000);
afterAll(async () => {
  await trellis?.stop();
});

/** Compute's JSONata expression: an input in revision 1 (a bad one fails the run), fixed in 2. */
const computing = (expression: string, name?: string): Definition => ({
  ...definition(
    [
      {
        name: 'Compute',
        type: { plugin: 'Data/Json' },
        parameters: { expression, input: { values: [1, 2, 3] } },
      },
    ],
    {
      inputs: { expression: { type: 'string', required: true } },
      outputs: { result: "Outputs('Compute').result" },
    },
  ),
  ...(name ? { name } : {}),
});

async function runToEnd(on: TrellisClient, workflowId: string, expression: string) {
  const { executionId } = await on.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
    body: { workflowId, inputs: { expression } },
  });
  return on.waitForExecution(workflowId, executionId);
}

const listed = async (on: TrellisClient, workflowId: string) =>
  (await on.GET('/executions', { params: { query: { workflowId } } })).map((item) => item.id);

describe('POST /executions/rerun', () => {
  it('previews which failed executions it would rerun, on which revision, and changes nothing', async () => {
    const workflowId = await addWorkflow(client, computing("$[Inputs('expression')]"));
    const failed = await runToEnd(client, workflowId, 'values[');
    const completed = await runToEnd(client, workflowId, '$count(values)');
    expect([failed.status, completed.status]).toEqual(['Failed', 'Completed']);
    const before = await listed(client, workflowId);

    const preview = await client.envelope.POST('/executions/rerun', {
      body: { filter: { workflowId }, preview: true },
    });
    expect(preview.messages).toEqual([
      '1 execution would be rerun on the revision they ran; 1 skipped.',
    ]);
    expect(preview.data).toEqual({
      preview: true,
      revision: 'ran',
      counts: { selected: 2, acted: 1, skipped: 1, notDone: 0 },
      executions: [
        {
          executionId: completed.executionId,
          workflowId,
          workflowName: expect.any(String),
          status: 'Completed',
          outcome: 'Skipped',
          reason: {
            code: 'execution.not_failed',
            message: `Execution "${completed.executionId}" is Completed; a bulk rerun reruns failed executions only.`,
          },
          ranRevision: 1,
          rerunRevision: null,
          newExecutionId: null,
        },
        {
          executionId: failed.executionId,
          workflowId,
          workflowName: expect.any(String),
          status: 'Failed',
          outcome: 'WouldAct',
          reason: null,
          ranRevision: 1,
          rerunRevision: 1,
          newExecutionId: null,
        },
      ],
    });
    expect(await listed(client, workflowId)).toEqual(before);
  });

  it('reruns failures on the revision they ran, or on the latest when the workflow changed since', async () => {
    const first = computing("$[Inputs('expression')]");
    const workflowId = await addWorkflow(client, first);
    const failedA = await runToEnd(client, workflowId, 'values[');
    const failedB = await runToEnd(client, workflowId, 'values[');
    // Revision 2 no longer reads the expression from the inputs: the failures' cause is fixed.
    await client.PUT('/workflows/{workflowId}', {
      params: { path: { workflowId } },
      body: { workflowId, definition: JSON.stringify(computing('$sum(values)', first.name)) },
    });

    const onRan = await client.envelope.POST('/executions/rerun', {
      body: { ids: [failedA.executionId] },
    });
    expect(onRan.messages).toEqual(['1 execution rerun on the revision they ran.']);
    const ranItem = onRan.data.executions[0]!;
    expect(ranItem).toMatchObject({ outcome: 'Done', ranRevision: 1, rerunRevision: 1 });
    const again = await client.waitForExecution(workflowId, ranItem.newExecutionId!);
    expect(again).toMatchObject({ status: 'Failed', revision: 1, rerunOf: failedA.executionId });

    const preview = await client.POST('/executions/rerun', {
      body: { ids: [failedB.executionId], revision: 'latest', preview: true },
    });
    expect(preview.executions[0]).toMatchObject({
      outcome: 'WouldAct',
      ranRevision: 1,
      rerunRevision: 2,
    });
    const onLatest = await client.POST('/executions/rerun', {
      body: { ids: [failedB.executionId], revision: 'latest' },
    });
    expect(onLatest.counts).toEqual({ selected: 1, acted: 1, skipped: 0, notDone: 0 });
    const fixed = await client.waitForExecution(
      workflowId,
      onLatest.executions[0]!.newExecutionId!,
    );
    expect(fixed).toMatchObject({
      status: 'Completed',
      revision: 2,
      rerunOf: failedB.executionId,
      inputs: { expression: 'values[' },
      outputs: { result: 6 },
    });
  });

  it('skips, on the latest revision, a failure whose inputs no longer fit it', async () => {
    const first = computing("$[Inputs('expression')]");
    const workflowId = await addWorkflow(client, first);
    const failed = await runToEnd(client, workflowId, 'values[');
    const second = { ...computing('$sum(values)', first.name), inputs: {} };
    await client.PUT('/workflows/{workflowId}', {
      params: { path: { workflowId }, query: { acceptBreaking: true } },
      body: { workflowId, definition: JSON.stringify(second) },
    });
    const before = await listed(client, workflowId);
    for (const preview of [true, false]) {
      const answer = await client.POST('/executions/rerun', {
        body: { ids: [failed.executionId], revision: 'latest', preview },
      });
      expect(answer.executions[0]).toMatchObject({
        outcome: 'Skipped',
        reason: {
          code: 'validation.unknown',
          message:
            'execution.inputs.expression: is not a declared input (the workflow declares none)',
        },
      });
    }
    expect(await listed(client, workflowId)).toEqual(before);
  });

  it('refuses a selection that is missing, doubled, empty or too large, changing nothing', async () => {
    const workflowId = await addWorkflow(client, computing("$[Inputs('expression')]"));
    const failed = await runToEnd(client, workflowId, 'values[');
    const refused = async (body: object, message: string) => {
      const error = await expectFailure(
        client.POST('/executions/rerun', { body: body as never }),
        400,
        message,
      );
      return error.codes;
    };
    // The body is one of two shapes (the contract's oneOf): each message names what it lacks.
    await refused({}, 'body.ids: is required');
    await refused({ filter: {} }, 'body.filter: must NOT have fewer than 1 properties');
    await refused({ ids: [failed.executionId], filter: { workflowId } }, 'is not allowed');
    await refused({ ids: [] }, 'body.ids');
    await refused({ ids: Array.from({ length: 501 }, () => randomUUID()) }, 'body.ids');
    await refused({ ids: ['nope'] }, 'body.ids');
    await refused({ filter: { status: ['Failed'] }, revision: 'newest' }, 'body.revision');
    await refused(
      { filter: { from: '2026-11-29T00:00:00Z', to: '2026-11-28T00:00:00Z' } },
      'body.filter.from: must not be after `to`',
    );
    await expectFailure(
      client.POST('/executions/rerun', { body: { filter: { workflowId: randomUUID() } } }),
      404,
    );
    expect(await listed(client, workflowId)).toEqual([failed.executionId]);
  });

  it('refuses a filter matching more than 500 executions, telling to narrow it', async () => {
    await trellis.admin.POST('/projects', { body: { name: 'bulk-many' } });
    const many = clientIn(trellis, basicAs('admin'), 'bulk-many');
    const workflowId = await addWorkflow(many, computing("$[Inputs('expression')]"));
    const projectOfMany = (
      await trellis.admin.GET('/projects/{projectId}', {
        params: { path: { projectId: 'bulk-many' } },
      })
    ).id;
    for (let index = 0; index < 501; index++) {
      await createExecutionWithTasks(trellis.db, {
        projectId: projectOfMany,
        workflowId,
        workflowName: 'seeded',
        definition: '{}',
        taskNames: [],
        temporalWorkflowId: `bulk-${randomUUID()}`,
        status: 'Failed',
        executionStart: new Date(Date.UTC(2026, 10, 1, 0, 0, index)),
        executionEnd: new Date(Date.UTC(2026, 10, 1, 0, 0, index + 1)),
        startedBy: 'ann',
        triggerId: null,
      });
    }
    const error = await expectFailure(
      many.POST('/executions/rerun', { body: { filter: { status: ['Failed'] }, preview: true } }),
      400,
      'body.filter: matches more than 500 executions',
    );
    expect(error.codes).toEqual(['selection.too_large']);
    // Narrowed to 500, it is taken.
    const narrowed = await many.POST('/executions/rerun', {
      body: {
        filter: { status: ['Failed'], from: '2026-11-01T00:00:01Z' },
        preview: true,
      },
    });
    expect(narrowed.counts.selected).toBe(500);
  });

  it('skips another project’s executions as not found, saying no more than for a made-up id', async () => {
    const otherName = `bulk-other-${Date.now().toString(36)}`;
    await trellis.admin.POST('/projects', { body: { name: otherName } });
    const other = clientIn(trellis, basicAs('admin'), otherName);
    const theirs = await addWorkflow(other, computing("$[Inputs('expression')]"));
    const theirFailure = await runToEnd(other, theirs, 'values[');
    const madeUp = randomUUID();
    for (const preview of [true, false]) {
      const answer = await client.POST('/executions/rerun', {
        body: { ids: [theirFailure.executionId, madeUp], preview },
      });
      const [foreign, unknown] = answer.executions;
      expect(foreign).toEqual({
        ...unknown,
        executionId: theirFailure.executionId,
        reason: {
          code: 'execution.not_found',
          message: `Execution "${theirFailure.executionId}" was not found.`,
        },
      });
      expect(unknown).toMatchObject({
        workflowId: null,
        workflowName: null,
        status: null,
        outcome: 'Skipped',
        ranRevision: null,
      });
    }
    expect(await listed(other, theirs)).toEqual([theirFailure.executionId]);
  });

  it('stops at the project’s starts a minute with a 429 saying what was rerun and what was not', async () => {
    const name = `bulk-limited-${Date.now().toString(36)}`;
    await trellis.admin.POST('/projects', { body: { name } });
    const limited = clientIn(trellis, basicAs('admin'), name);
    const workflowId = await addWorkflow(limited, computing("$[Inputs('expression')]"));
    const failures = [];
    for (let index = 0; index < 3; index++) {
      failures.push((await runToEnd(limited, workflowId, 'values[')).executionId);
    }
    // Three starts this minute already: a limit of four leaves room for one rerun.
    await trellis.admin.PUT('/projects/{projectId}', {
      params: { path: { projectId: name } },
      body: { name, limits: { startsPerMinute: 4 } },
    });
    const error = await apiError(limited.POST('/executions/rerun', { body: { ids: failures } }));
    expect(error.status).toBe(429);
    expect(error.codes).toEqual(['project.starts_per_minute']);
    expect(error.retryAfterSeconds).toBeGreaterThan(0);
    const data = (error.body as { data: { counts: unknown; executions: { outcome: string }[] } })
      .data;
    expect(data.counts).toEqual({ selected: 3, acted: 1, skipped: 0, notDone: 2 });
    expect(data.executions.map((item) => item.outcome)).toEqual(['Done', 'NotDone', 'NotDone']);
    expect(await listed(limited, workflowId)).toHaveLength(4);
  });

  it('runs once per Idempotency-Key, and the audit entry names each rerun', async () => {
    const workflowId = await addWorkflow(client, computing("$[Inputs('expression')]"));
    const failed = await runToEnd(client, workflowId, 'values[');
    const key = randomUUID();
    const send = () =>
      client.POST('/executions/rerun', {
        params: { header: { 'Idempotency-Key': key } },
        body: { ids: [failed.executionId] },
      });
    const first = await send();
    const repeated = await send();
    expect(repeated).toEqual(first);
    expect(await listed(client, workflowId)).toHaveLength(2);
    const [entry] = await trellis.admin.GET('/audit', {
      params: { query: { operation: 'rerunExecutions', pageSize: 1 } },
    });
    expect(entry).toMatchObject({
      project: 'bulk',
      operation: 'rerunExecutions',
      status: 200,
      targets: { [`rerun ${failed.executionId}`]: first.executions[0]!.newExecutionId },
    });
  });
});

describe('POST /executions/cancel', () => {
  it('cancels the running executions of a selection, skipping those already finished', async () => {
    const workflowId = await addWorkflow(client, definition([{ name: 'Wait', ...delay(120_000) }]));
    const startOne = async () =>
      (
        await client.POST('/workflows/{workflowId}/executions', {
          params: { path: { workflowId } },
          body: { workflowId },
        })
      ).executionId;
    const running = [await startOne(), await startOne()];
    for (const id of running) await untilStatuses(client, workflowId, id, { Wait: 'Running' });
    const ended = await startOne();
    await client.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
      params: { path: { workflowId, executionId: ended } },
    });
    await client.waitForExecution(workflowId, ended);

    const preview = await client.POST('/executions/cancel', {
      body: { filter: { workflowId }, preview: true },
    });
    expect(preview.counts).toEqual({ selected: 3, acted: 2, skipped: 1, notDone: 0 });
    for (const id of running) {
      expect(
        (
          await client.GET('/workflows/{workflowId}/executions/{executionId}', {
            params: { path: { workflowId, executionId: id } },
          })
        ).status,
      ).toBe('Running');
    }

    const canceled = await client.envelope.POST('/executions/cancel', {
      body: { filter: { workflowId, status: ['Running', 'Canceled'] } },
    });
    expect(canceled.messages).toEqual([
      '2 executions asked to stop (cancellation requested); 1 skipped.',
    ]);
    const outcomes = Object.fromEntries(
      canceled.data.executions.map((item) => [item.executionId, item.outcome]),
    );
    expect(outcomes).toEqual({ [running[0]!]: 'Done', [running[1]!]: 'Done', [ended]: 'Skipped' });
    expect(canceled.data.executions.find((item) => item.executionId === ended)!.reason).toEqual({
      code: 'execution.not_running',
      message: `Execution "${ended}" is Canceled; only a Pending, Running or Paused execution can be canceled.`,
    });
    for (const id of running) {
      expect(await client.waitForExecution(workflowId, id)).toMatchObject({ status: 'Canceled' });
    }
    const [entry] = await trellis.admin.GET('/audit', {
      params: { query: { operation: 'cancelExecutions', pageSize: 1 } },
    });
    expect(entry!.targets).toMatchObject({
      [`canceled ${running[0]}`]: running[0],
      [`canceled ${running[1]}`]: running[1],
    });
    expect(entry!.targets).not.toHaveProperty(`canceled ${ended}`);
  });

  it('is refused to a caller without the workflow role', async () => {
    const viewer = clientIn(trellis, basicAs('config'));
    await expectFailure(viewer.POST('/executions/cancel', { body: { ids: [randomUUID()] } }), 403);
  });
});
