import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackAllowed, startTrellis, type Trellis } from '../support/harness.js';
import { definition, run, tasksOf } from '../support/engine-support.js';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';

let trellis: Trellis;
let server: ScriptedServer;

beforeAll(async () => {
  [trellis, server] = await Promise.all([
    startTrellis({ worker: true, config: loopbackAllowed }),
    startScriptedServer(),
  ]);
});
afterAll(async () => {
  await trellis?.stop();
  await server?.close();
});

describe('expressions passing data between tasks', () => {
  it('Net/Http → Data/Json → Storage/Local, with outputs, variables and conditions', async () => {
    server.script('/orders', [
      {
        status: 200,
        body: {
          orders: [
            { total: 12.5, status: 'open' },
            { total: 7.5, status: 'open' },
            { total: 99, status: 'closed' },
          ],
        },
      },
    ]);
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition(
        [
          {
            name: 'Fetch',
            type: { plugin: 'Net/Http', version: '1.0.0' },
            parameters: { url: `${server.url}/orders`, method: 'GET' },
          },
          {
            name: 'Sum',
            type: { plugin: 'Data/Json' },
            dependencies: ['Fetch'],
            parameters: {
              expression: "$sum(orders[status='open'].total)",
              input: "$[Outputs('Fetch').body]",
            },
            executionCondition: { expression: "Outputs('Fetch').status == 200" },
          },
          {
            name: 'Store',
            type: { plugin: 'Storage/Local' },
            dependencies: ['Sum'],
            parameters: {
              operation: 'write',
              path: "reports/$[Variables('region')].json",
              content: { region: "$[Variables('region')]", openTotal: "$[Outputs('Sum').result]" },
            },
          },
          {
            name: 'Summary',
            type: { plugin: 'Flow/Log' },
            dependencies: ['Store'],
            parameters: {
              message: "Stored $[Outputs('Store').path] with $[Outputs('Sum').result] open",
            },
          },
        ],
        { variables: { region: 'eu' } },
      ),
    );
    expect(execution.status).toBe('Completed');
    const stored = JSON.parse(
      await readFile(path.join(trellis.config.Plugins.StorageRoot, 'reports', 'eu.json'), 'utf8'),
    ) as unknown;
    // A string that is exactly one expression keeps the value's type (a number here).
    expect(stored).toEqual({ region: 'eu', openTotal: 20 });
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    const logs = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}/logs',
      { params: { path: { workflowId, executionId, taskExecutionId: tasks.Summary!.id } } },
    );
    expect(logs.map((entry) => entry.message)).toContain('Stored reports/eu.json with 20 open');
  });

  it("keeps the keys of a task's JSON output as the server answered them (snake_case, upper case)", async () => {
    server.script('/user', [
      { status: 200, body: { user_id: 7, HTTP_STATUS: 2, nested: { snake_case: 4 } } },
    ]);
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        {
          name: 'Call',
          type: { plugin: 'Net/Http' },
          parameters: { url: `${server.url}/user`, method: 'GET' },
        },
        {
          name: 'Say',
          type: { plugin: 'Flow/Log' },
          dependencies: ['Call'],
          parameters: {
            message:
              "user $[Outputs('Call').body.user_id] $[Outputs('Call').body.HTTP_STATUS] $[Outputs('Call').body.nested.snake_case]",
          },
        },
      ]),
    );
    expect(execution.status).toBe('Completed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    const logs = await trellis.admin.GET(
      '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}/logs',
      { params: { path: { workflowId, executionId, taskExecutionId: tasks.Say!.id } } },
    );
    expect(logs.map((entry) => entry.message)).toContain('user 7 2 4');
  });

  it('fails a task whose expression cannot be evaluated, naming the problem', async () => {
    const { workflowId, executionId, execution } = await run(
      trellis,
      definition([
        { name: 'A', type: { plugin: 'Flow/NoOp' } },
        {
          name: 'B',
          type: { plugin: 'Flow/Log' },
          dependencies: ['A'],
          parameters: { message: "$[Outputs('A').missing.deeper + 1]" },
        },
      ]),
    );
    expect(execution.status).toBe('Failed');
    const tasks = await tasksOf(trellis.admin, workflowId, executionId);
    expect(tasks.B!.status).toBe('Failed');
    expect(tasks.B!.message).toMatch(/^Failed: cannot add null and the number 1/);
  });
});
