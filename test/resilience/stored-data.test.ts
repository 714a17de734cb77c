/**
 * Bad data never wedges a run and never answers 500 (issue 17). Each case here once did: a NUL
 * in a task's output or log message failed the database write and the attempt retried forever;
 * parameters nested 2,000 deep were accepted, then the run's setup failed on every attempt; a
 * NUL in a workflow name and parameters nested 3,000+ deep answered 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as executionRepository from '#store/execution-repository.js';
import * as workflowRepository from '#store/workflow-repository.js';
import { createLogger } from '#platform/logging.js';
import { createPluginRunner } from '#plugin-host/runner.js';
import { executionWorkflowId } from '#protocol/ids.js';
import { startExecutionWorkflow } from '#application/executions/launch-execution.js';
import { basicAuthorization } from '../../sdk/src/index.js';
import { createActivities } from '../../workflows-worker/src/activities/index.js';
import { expectFailure } from '../api/api-error.js';
import { definition, executionLogs, run, taskLogs, tasksOf } from '../support/engine-support.js';
import { startTrellis, users, type Trellis } from '../support/harness.js';

let trellis: Trellis;

beforeAll(async () => {
  trellis = await startTrellis({ worker: true });
});
afterAll(async () => {
  await trellis?.stop();
});

/** `{"a":{"a":...{"a":1}}}`, `levels` objects deep, as JSON text (JSON.stringify would overflow). */
function nested(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

/** A definition's text with one task whose parameters are `parameters` (JSON text). */
function withParameters(parameters: string): string {
  return JSON.stringify(
    definition([{ name: 'Deep', type: { plugin: 'Flow/NoOp' }, parameters: {} }]),
  ).replace('"parameters":{}', `"parameters":${parameters}`);
}

/** A POST with a body sent as it is (the SDK would refuse some of these before sending). */
async function post(path: string, body: string): Promise<{ status: number; messages: string[] }> {
  const response = await fetch(`${trellis.baseUrl}${path}`, {
    method: 'POST',
    headers: {
      authorization: basicAuthorization(users.admin.username, users.admin.password),
      'content-type': 'application/json',
    },
    body,
  });
  const envelope = (await response.json()) as { messages: string[] };
  return { status: response.status, messages: envelope.messages };
}

async function get(path: string): Promise<{ status: number; messages: string[] }> {
  const response = await fetch(`${trellis.baseUrl}${path}`, {
    headers: { authorization: basicAuthorization(users.admin.username, users.admin.password) },
  });
  const envelope = (await response.json()) as { messages: string[] };
  return { status: response.status, messages: envelope.messages };
}

describe('a NUL character in what a task produces', () => {
  it("is stored as U+FFFD in a task's output and log messages, and the run goes on", async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        {
          name: 'Decode',
          type: { plugin: 'Data/Base64' },
          parameters: { operation: 'decode', input: 'QQBC' }, // "A\u0000B"
        },
        {
          name: 'Say',
          type: { plugin: 'Flow/Log' },
          dependencies: ['Decode'],
          parameters: { message: "[$[Outputs('Decode').result]]" },
        },
      ]),
      30_000,
    );
    expect(execution.status).toBe('Completed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(tasks.Decode!.status).toBe('Completed');
    expect(await taskLogs(trellis.admin, workflowId, executionId, tasks.Say!.id)).toContain(
      '[A\uFFFDB]',
    );
  });

  it("fails a task once when its plugin's error message holds one, and the run ends", async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        {
          name: 'Throw',
          type: { plugin: 'Data/Json' },
          parameters: { expression: "$error('bad' & $base64decode('AA==') & 'input')" },
          errorHandling: { strategy: 'Retry', retryPolicy: { maxRetries: 1 } },
        },
      ]),
      30_000,
    );
    expect(execution.status).toBe('Failed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(tasks.Throw!.status).toBe('Failed');
    expect(tasks.Throw!.message).toContain('bad\uFFFDinput');
  });
});

describe('definitions too deep to walk', () => {
  it('refuses parameters nested 2,000 and 100,000 deep at add, naming the limit and the place', async () => {
    for (const levels of [2_000, 100_000]) {
      const text = withParameters(nested(levels));
      const answer = await post('/workflows/Add', JSON.stringify({ definition: text }));
      expect(answer.status, answer.messages.join('; ')).toBe(400);
      expect(answer.messages.join('\n')).toMatch(
        /^body\.definition: tasks\[0\]\.parameters\.a\.a.*Definitions\.MaxDepth/m,
      );
    }
  });

  it('refuses request bodies nested too deep (trigger properties) with 400, not 500', async () => {
    const { id } = await trellis.admin.POST('/workflows/Add', {
      body: {
        definition: JSON.stringify(definition([{ name: 'A', type: { plugin: 'Flow/NoOp' } }])),
      },
    });
    const body = `{"workflowId":"${id}","type":"Manual","status":"Active","properties":${nested(100_000)}}`;
    const answer = await post(`/workflows/${id}/triggers`, body);
    expect(answer.status, answer.messages.join('; ')).toBe(400);
    expect(answer.messages.join('\n')).toMatch(/^body\.properties\.a\.a.*Server\.MaxBodyDepth/m);
  });

  it('runs parameters as deep as the limit allows, expressions at the bottom resolved', async () => {
    const maxDepth = trellis.config.Definitions.MaxDepth;
    // definition → tasks → [0] → parameters: three levels before the parameters' own.
    let value: unknown = "$[Outputs('First').value]";
    for (let i = 0; i < maxDepth - 3; i++) value = { a: value };
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        { name: 'First', type: { plugin: 'Flow/NoOp' }, parameters: { value: 'bottom' } },
        {
          name: 'Deep',
          type: { plugin: 'Flow/NoOp' },
          dependencies: ['First'],
          parameters: value,
        },
        {
          name: 'Read',
          type: { plugin: 'Flow/Log' },
          dependencies: ['Deep'],
          parameters: { message: `got $[Outputs('Deep')${'.a'.repeat(maxDepth - 3)}]` },
        },
      ]),
      30_000,
    );
    expect(execution.status).toBe('Completed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(await taskLogs(trellis.admin, workflowId, executionId, tasks.Read!.id)).toContain(
      'got bottom',
    );
  });

  it('ends a run recorded before the limits (2,000 deep) Failed, naming why, and lets the workflow go', async () => {
    const text = withParameters(nested(2_000));
    // As an older Trellis stored it: the limits did not exist.
    const workflow = await workflowRepository.insert(trellis.db, {
      name: `deep-${Date.now()}`,
      definition: text,
    });
    const executionId = crypto.randomUUID();
    const { execution } = await executionRepository.createExecutionWithTasks(trellis.db, {
      id: executionId,
      workflowId: workflow.id,
      workflowName: workflow.name,
      definition: text,
      taskNames: ['Deep'],
      temporalWorkflowId: executionWorkflowId(executionId),
      status: 'Running',
    });
    await startExecutionWorkflow(trellis.temporal, trellis.config, execution);
    const finished = await trellis.admin.waitForExecution(workflow.id, executionId, {
      timeoutMs: 30_000,
    });
    expect(finished.status).toBe('Failed');
    const tasks = await tasksOf(trellis.admin, workflow.id, executionId);
    expect(tasks.Deep!.status).toBe('Canceled');
    expect((await executionLogs(trellis.admin, workflow.id, executionId)).join('\n')).toMatch(
      /Definitions\.MaxDepth/,
    );
    await trellis.admin.DELETE('/workflows/{workflowId}', {
      params: { path: { workflowId: workflow.id } },
    });
  });
});

describe('bookkeeping that cannot succeed', () => {
  it('ends the execution Failed with the reason instead of retrying forever', async () => {
    // A run that started under larger limits, now served by a worker with lower ones, asks
    // for an approval: the worker cannot use the definition, however often it tries.
    const text = withParameters(nested(10));
    const workflow = await workflowRepository.insert(trellis.db, {
      name: `lowered-${Date.now()}`,
      definition: text,
    });
    const { execution } = await executionRepository.createExecutionWithTasks(trellis.db, {
      workflowId: workflow.id,
      workflowName: workflow.name,
      definition: text,
      taskNames: ['Deep'],
      temporalWorkflowId: `lowered-${crypto.randomUUID()}`,
      status: 'Running',
    });
    const config = {
      ...trellis.config,
      Definitions: { ...trellis.config.Definitions, MaxDepth: 8 },
    };
    const activities = createActivities({
      db: trellis.db,
      config,
      logger: createLogger({ Level: 'silent' }),
      runner: createPluginRunner({ db: trellis.db, config }),
    });
    const [task] = (
      await trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}/tasks', {
        params: { path: { workflowId: workflow.id, executionId: execution.id } },
      })
    ).map((row) => row.id);
    const recording = activities.recordProgress({
      executionId: execution.id,
      tasks: [],
      approvals: [{ taskExecutionId: task!, taskName: 'Deep' }],
      logs: [],
    });
    await expect(recording).rejects.toMatchObject({
      nonRetryable: true,
      message: expect.stringMatching(/progress could not be recorded: .*Definitions\.MaxDepth/),
    });
    const detail = await trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
      params: { path: { workflowId: workflow.id, executionId: execution.id } },
    });
    expect(detail.status).toBe('Failed');
    const tasks = await tasksOf(trellis.admin, workflow.id, execution.id);
    expect(tasks.Deep!.status).toBe('Canceled');
    expect(tasks.Deep!.message).toMatch(/Definitions\.MaxDepth/);
  });
});

describe('text PostgreSQL cannot store, sent to the API', () => {
  it('refuses a NUL in a workflow name with 400 naming the field', async () => {
    const text = JSON.stringify(definition([{ name: 'A', type: { plugin: 'Flow/NoOp' } }])).replace(
      '"engine-',
      '"engine-\\u0000',
    );
    await expectFailure(
      trellis.admin.POST('/workflows/Add', { body: { definition: text } }),
      400,
      /^body\.definition: name: .*NUL/,
    );
  });

  it('refuses a NUL or an unpaired surrogate in any body string or key, naming the field', async () => {
    const { id } = await trellis.admin.POST('/workflows/Add', {
      body: {
        definition: JSON.stringify(definition([{ name: 'A', type: { plugin: 'Flow/NoOp' } }])),
      },
    });
    const trigger = (properties: string) =>
      `{"workflowId":"${id}","type":"Manual","status":"Active","properties":${properties}}`;
    for (const [properties, field] of [
      ['{"note":"a\\u0000b"}', 'body.properties.note'],
      ['{"list":["ok","\\u0000"]}', 'body.properties.list[1]'],
      ['{"ke\\u0000y":1}', 'body.properties["ke\\u0000y"]'],
      ['{"half":"\\ud800"}', 'body.properties.half'],
    ] as const) {
      const answer = await post(`/workflows/${id}/triggers`, trigger(properties));
      expect(answer.status, answer.messages.join('; ')).toBe(400);
      expect(answer.messages.join('\n')).toContain(`${field}: `);
    }
    const config = await post(
      '/config',
      JSON.stringify({
        name: 'nul\u0000name',
        type: 'Flow/NoOp',
        version: '1.0.0',
        specifications: {},
      }),
    );
    expect(config.status).toBe(400);
    expect(config.messages.join('\n')).toMatch(/^body\.name: .*NUL/m);
  });

  it('refuses a NUL in a path or query parameter, naming it', async () => {
    const inPath = await get('/workflows/%00');
    expect(inPath.status).toBe(400);
    expect(inPath.messages.join('\n')).toMatch(/^path\.workflowId: .*NUL/m);
    const inQuery = await get('/workflows?page=1%00');
    expect(inQuery.status).toBe(400);
    expect(inQuery.messages.join('\n')).toMatch(/^query\.page: .*NUL/m);
  });
});
