/**
 * The SDK end to end as it is published: `npm pack` in sdk/, the tarball installed into a scratch
 * project outside the repository, and the package imported from there (as an ES module, and by
 * CommonJS `require`) to drive a real Trellis. Only types come from sdk/src; at run time nothing
 * here loads it.
 */
import { readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as Sdk from '../../sdk/src/index.js';
import { mintToken, startTrellis, users, type Trellis } from '../support/harness.js';
import { packSdk, type PackedSdk } from '../support/packed-sdk.js';

let packed: PackedSdk;
let sdk: typeof Sdk;
let trellis: Trellis;

beforeAll(async () => {
  // Packing (a clean build) and installing take a while on a busy machine.
  [packed, trellis] = await Promise.all([packSdk(), startTrellis({ worker: true })]);
  sdk = (await import(pathToFileURL(packed.esmEntry).href)) as typeof Sdk;
}, 300_000);
afterAll(async () => {
  await trellis?.stop();
  await packed?.remove();
});

const admin = () =>
  sdk.createTrellisClient({ baseUrl: trellis.baseUrl, basic: { ...users.admin } });

/** The packed `TrellisApiError` a call fails with. */
async function failure(call: Promise<unknown>): Promise<Sdk.TrellisApiError> {
  const error: unknown = await call.then(
    (value) => expect.fail(`expected a failure, got ${JSON.stringify(value)}`),
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(sdk.TrellisApiError);
  return error as Sdk.TrellisApiError;
}

describe('the packed SDK', () => {
  it('is installed from its tarball with its build, README and manifest only', async () => {
    const installed = path.join(packed.consumer, 'node_modules', '@trellis', 'sdk');
    const files = (await readdir(installed, { recursive: true, withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(installed, path.join(entry.parentPath, entry.name)));
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/index.js']));
    expect(
      files.filter((file) => !/^(package\.json|README\.md|dist\/.+\.(js|d\.ts))$/.test(file)),
    ).toEqual([]);
    expect(files.filter((file) => file.includes('.test.'))).toEqual([]);
    expect(Object.keys(sdk).sort()).toEqual([
      'TrellisApiError',
      'basicAuthorization',
      'createClient',
      'createTrellisClient',
      'defineWorkflow',
    ]);
  });

  it('adds a workflow, executes it and reads its tasks, logs and envelope', async () => {
    const trellisClient = admin();
    const name = `packed-sdk-${Date.now().toString(36)}`;
    const definition = JSON.stringify({
      name,
      tasks: [{ name: 'Say', type: { plugin: 'Flow/Log' }, parameters: { message: 'hello' } }],
    });
    const { id: workflowId } = await trellisClient.POST('/workflows/Add', {
      body: { definition },
    });
    const { executionId } = await trellisClient.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
      body: { workflowId },
    });
    const finished = await trellisClient.waitForExecution(workflowId, executionId, {
      timeoutMs: 60_000,
    });
    expect(finished.status).toBe('Completed');

    // The run's events, as the packed package parses them (eventsource-parser, its dependency).
    const events: string[] = [];
    for await (const event of trellisClient.watchExecution(workflowId, executionId)) {
      expect(event.id).toBe(events.length + 1);
      events.push(event.event === 'log' ? `log ${event.data.message}` : event.event);
    }
    expect(events.at(-1)).toBe('execution');
    expect(events).toContain('log hello');

    const tasks = await trellisClient.GET(
      '/workflows/{workflowId}/executions/{executionId}/tasks',
      {
        params: { path: { workflowId, executionId } },
      },
    );
    expect(tasks.map((task) => [task.name, task.status])).toEqual([['Say', 'Completed']]);

    // Page by page, one entry a page: the same entries as the whole list.
    const taskLogs =
      '/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}/logs';
    const path = { workflowId, executionId, taskExecutionId: tasks[0]!.id };
    const paged: string[] = [];
    for await (const entry of trellisClient.all(taskLogs, {
      params: { path, query: { pageSize: 1 } },
    })) {
      paged.push(entry.message);
    }
    const whole = await trellisClient.GET(taskLogs, { params: { path } });
    expect(paged).toEqual(whole.map((entry) => entry.message));
    expect(paged.length).toBeGreaterThan(1);
    expect(paged).toContain('hello');

    const page = await trellisClient.page('/workflows', { params: { query: { pageSize: 1 } } });
    expect(page.data).toHaveLength(1);
    expect(page.pagination).toMatchObject({ page: 1, pageSize: 1 });

    const envelope = await trellisClient.envelope.GET('/workflows/{workflowId}', {
      params: { path: { workflowId } },
    });
    expect(envelope).toMatchObject({
      succeeded: true,
      data: { id: workflowId, workflow: definition },
    });

    const duplicate = await failure(trellisClient.POST('/workflows/Add', { body: { definition } }));
    expect(duplicate.status).toBe(409);
  });

  it('sends a definition object as its JSON text; a misspelled parameter is a 400 naming it', async () => {
    const trellisClient = admin();
    const definition = sdk.defineWorkflow({
      name: `packed-sdk-object-${Date.now().toString(36)}`,
      tasks: [
        {
          name: 'Sum',
          type: { plugin: 'Data/Json' },
          parameters: { input: [1, 2], expression: '$sum($)' },
        },
      ],
    });
    const { id } = await trellisClient.POST('/workflows/Add', { body: { definition } });
    const stored = await trellisClient.GET('/workflows/{workflowId}', {
      params: { path: { workflowId: id } },
    });
    expect(stored.workflow).toBe(JSON.stringify(definition));

    const misspelled: Sdk.WorkflowDefinition = {
      name: 'packed-sdk-misspelled',
      tasks: [
        {
          name: 'Sum',
          type: { plugin: 'Data/Json' },
          parameters: { data: [1, 2], expression: '$sum($)' },
        },
      ],
    };
    const refused = await failure(
      trellisClient.PUT('/workflows/{workflowId}', {
        params: { path: { workflowId: id } },
        body: { workflowId: id, definition: misspelled },
      }),
    );
    expect(refused.status).toBe(400);
    expect(refused.messages).toEqual([
      'body.definition: tasks[0] "Sum": parameter "data" is not allowed',
    ]);
  });

  it('authenticates by Basic and by Bearer, and reports refusals as TrellisApiError', async () => {
    const { baseUrl } = trellis;
    const token = await mintToken({ roles: ['plugins'] });
    const plugins = sdk.createTrellisClient({ baseUrl, bearer: async () => token });
    expect((await plugins.GET('/plugins')).length).toBeGreaterThan(0);

    const refused = await failure(plugins.GET('/workflows'));
    expect(refused.status).toBe(403);
    expect(refused.messages[0]).toContain('admin, workflow');

    const anonymous = await failure(sdk.createTrellisClient({ baseUrl }).GET('/config'));
    expect(anonymous.status).toBe(401);

    const unknown = await failure(
      admin().GET('/workflows/{workflowId}', {
        params: { path: { workflowId: '00000000-0000-4000-8000-000000000000' } },
      }),
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ data: null, succeeded: false });

    const { data, response } = await admin().raw.GET('/version');
    expect(response.status).toBe(200);
    expect(data?.data.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('is the same module to a CommonJS consumer (require of an ES module, Node >= 20.19)', async () => {
    const required = createRequire(import.meta.url)(packed.cjsEntry) as typeof Sdk;
    expect(required.createTrellisClient).toBe(sdk.createTrellisClient);
    const client = required.createTrellisClient({
      baseUrl: trellis.baseUrl,
      basic: { ...users.workflow },
    });
    expect(Array.isArray(await client.GET('/workflows'))).toBe(true);
    const refused = await failure(client.GET('/config'));
    expect(refused).toBeInstanceOf(required.TrellisApiError);
    expect(refused.status).toBe(403);
  });
});
