import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleId } from '#protocol/ids.js';
import { basicAs, startTrellis, type Trellis } from '../support/harness.js';
import type { WorkflowDefinition } from '../../sdk/src/index.js';
import { expectFailure } from './api-error.js';
import { describeAuthMatrix } from './auth-matrix.js';
import { simpleDefinition } from './definitions.js';
import { expectRawFailure, sendRaw } from './http.js';

let trellis: Trellis;
beforeAll(async () => {
  trellis = await startTrellis();
});
afterAll(async () => {
  await trellis?.stop();
});

const unknownId = '00000000-0000-4000-8000-000000000000';

async function add(definition: string) {
  return trellis.admin.POST('/workflows/Add', { body: { definition } });
}

async function workflowNames(): Promise<string[]> {
  return (await trellis.admin.GET('/workflows')).map((workflow) => workflow.name);
}

async function definitionOf(workflowId: string): Promise<string> {
  return (await trellis.admin.GET('/workflows/{workflowId}', { params: { path: { workflowId } } }))
    .workflow;
}

/** An active TimeBased trigger (so a Temporal schedule) on the workflow; its id. */
async function addTimeBasedTrigger(workflowId: string, cron: string): Promise<string> {
  const { triggerId } = await trellis.admin.POST('/workflows/{workflowId}/triggers', {
    params: { path: { workflowId } },
    body: { workflowId, type: 'TimeBased', status: 'Active', properties: { cron } },
  });
  return triggerId;
}

describeAuthMatrix({
  role: 'workflow',
  trellis: () => trellis,
  call: (client) => client.GET('/workflows'),
});

describe('/workflows', () => {
  it('adds a workflow, keeping the text as sent and naming it from the definition', async () => {
    // Keys in any case and odd spacing: stored exactly as sent.
    const text = `{ "Name": "Mixed-Case",\n  "TASKS": [ { "NAME": "only", "Type": { "Plugin": "Flow/NoOp" } } ] }`;
    const added = await trellis.admin.envelope.POST('/workflows/Add', {
      body: { definition: text },
    });
    expect(added).toMatchObject({ succeeded: true, data: { name: 'Mixed-Case' } });
    expect(added.messages).toEqual(['Workflow "Mixed-Case" was created.']);
    const { id } = added.data;

    const detail = await trellis.admin.GET('/workflows/{workflowId}', {
      params: { path: { workflowId: id } },
    });
    expect(detail).toEqual({ id, name: 'Mixed-Case', workflow: text, revision: 1 });
    const listed = (await trellis.admin.GET('/workflows')).find((workflow) => workflow.id === id);
    expect(listed).toEqual({
      id,
      name: 'Mixed-Case',
      modifiedDate: expect.any(String),
      revision: 1,
    });
    expect(Date.parse(listed!.modifiedDate)).not.toBeNaN();
  });

  it('accepts POST /workflows as an alias of /workflows/Add', async () => {
    const added = await trellis.admin.POST('/workflows', {
      body: { definition: simpleDefinition('via-alias') },
    });
    expect(added.name).toBe('via-alias');
    expect(await definitionOf(added.id)).toBe(simpleDefinition('via-alias'));
  });

  it('takes the definition as an object too, returning it as its JSON text', async () => {
    const definition: WorkflowDefinition = {
      name: 'as-object',
      tasks: [
        { name: 'Say', type: { plugin: 'Flow/Log' }, parameters: { message: 'hello' } },
        { name: 'After', type: { plugin: 'Flow/NoOp' }, dependencies: ['Say'] },
      ],
    };
    const added = await trellis.admin.POST('/workflows/Add', { body: { definition } });
    expect(added.name).toBe('as-object');
    const text = await definitionOf(added.id);
    expect(typeof text).toBe('string');
    expect(JSON.parse(text)).toEqual(definition);

    // An update as an object, without the body's workflowId (the path's is used).
    const renamed = { ...definition, name: 'as-object-renamed' };
    const updated = await trellis.admin.envelope.PUT('/workflows/{workflowId}', {
      params: { path: { workflowId: added.id } },
      body: { definition: renamed },
    });
    expect(updated.messages).toEqual(['Workflow "as-object-renamed" was updated (revision 2).']);
    expect(JSON.parse(await definitionOf(added.id))).toEqual(renamed);
  });

  it('refuses an object definition that breaks the schema or the graph, saying where', async () => {
    const before = await workflowNames();
    await expectFailure(
      trellis.admin.POST('/workflows/Add', {
        // What the SDK's types refuse, sent anyway: the server says the same.
        body: {
          definition: {
            name: 'no-task-name',
            tasks: [{ type: { plugin: 'Flow/NoOp' } }],
          } as unknown as WorkflowDefinition,
        },
      }),
      400,
      /body\.definition\.tasks\[0\]/,
    );
    await expectFailure(
      trellis.admin.POST('/workflows/Add', {
        body: {
          definition: {
            name: 'object-dangling',
            tasks: [{ name: 'x', type: { plugin: 'Flow/NoOp' }, dependencies: ['ghost'] }],
          },
        },
      }),
      400,
      /ghost/,
    );
    expect(await workflowNames()).toEqual(before);
  });

  it('updates the definition (and name), stamping modifiedDate', async () => {
    const { id } = await add(simpleDefinition('before-update'));
    const before = (await trellis.admin.GET('/workflows')).find((workflow) => workflow.id === id)!;
    await new Promise((resolve) => setTimeout(resolve, 20));
    const updated = await trellis.admin.envelope.PUT('/workflows/{workflowId}', {
      params: { path: { workflowId: id } },
      body: { workflowId: id, definition: simpleDefinition('after-update') },
    });
    expect(updated).toMatchObject({ data: {}, succeeded: true });
    expect(updated.messages).toEqual(['Workflow "after-update" was updated (revision 2).']);
    expect(await definitionOf(id)).toBe(simpleDefinition('after-update'));
    const after = (await trellis.admin.GET('/workflows')).find((workflow) => workflow.id === id)!;
    expect(after.name).toBe('after-update');
    expect(after.revision).toBe(2);
    expect(Date.parse(after.modifiedDate)).toBeGreaterThan(Date.parse(before.modifiedDate));
  });

  it('refreshes the schedules of TimeBased triggers when an update renames the workflow', async () => {
    const { id } = await add(simpleDefinition('named-before'));
    const triggerId = await addTimeBasedTrigger(id, '0 4 * * *');
    const handle = trellis.temporal.client.schedule.getHandle(scheduleId(triggerId));
    const nameOnSchedule = async () => {
      const { action } = await handle.describe();
      const attributes = action.type === 'startWorkflow' ? action.typedSearchAttributes : undefined;
      const pairs = Array.isArray(attributes) ? attributes : (attributes?.getAll() ?? []);
      return pairs.find((pair) => pair.key.name === 'TrellisWorkflowName')?.value;
    };
    expect(await nameOnSchedule()).toBe('named-before');
    await trellis.admin.PUT('/workflows/{workflowId}', {
      params: { path: { workflowId: id } },
      body: { workflowId: id, definition: simpleDefinition('named-after') },
    });
    expect(await nameOnSchedule()).toBe('named-after');
    await trellis.admin.DELETE('/workflows/{workflowId}', { params: { path: { workflowId: id } } });
  });

  it('deletes a workflow with its triggers and their schedules', async () => {
    const { id } = await add(simpleDefinition('to-delete'));
    const triggerId = await addTimeBasedTrigger(id, '0 3 * * *');
    const schedules = trellis.temporal.client.schedule;
    await schedules.getHandle(scheduleId(triggerId)).describe();

    const deleted = await trellis.admin.envelope.DELETE('/workflows/{workflowId}', {
      params: { path: { workflowId: id } },
    });
    expect(deleted.messages).toEqual(['Workflow "to-delete" was deleted.']);
    await expectFailure(
      trellis.admin.GET('/workflows/{workflowId}', { params: { path: { workflowId: id } } }),
      404,
    );
    const triggers = await trellis.db
      .selectFrom('workflowTrigger')
      .select('id')
      .where('workflowId', '=', id)
      .execute();
    expect(triggers).toEqual([]);
    await expect(schedules.getHandle(scheduleId(triggerId)).describe()).rejects.toThrow();
  });

  it('refuses to delete a workflow with an execution in progress (409), keeping it', async () => {
    const { id } = await add(simpleDefinition('busy'));
    // No worker runs in this file, so the execution stays in progress.
    await trellis.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId: id } },
      body: { workflowId: id },
    });
    await expectFailure(
      trellis.admin.DELETE('/workflows/{workflowId}', { params: { path: { workflowId: id } } }),
      409,
      'busy',
    );
    expect(await workflowNames()).toContain('busy');
  });

  it('rejects invalid definitions with one message per problem, storing nothing', async () => {
    const before = await workflowNames();
    const cycle = JSON.stringify({
      name: 'cyclic',
      tasks: [
        { name: 'a', type: { plugin: 'Flow/NoOp' }, dependencies: ['c'] },
        { name: 'b', type: { plugin: 'Flow/NoOp' }, dependencies: ['a'] },
        { name: 'c', type: { plugin: 'Flow/NoOp' }, dependencies: ['b'] },
      ],
    });
    const cycleError = await expectFailure(add(cycle), 400, /cycle/);
    expect(cycleError.messages.join(' ')).toMatch(/a → b → c → a|b → c → a → b|c → a → b → c/);

    await expectFailure(add('{"name": "broken",'), 400, 'not valid JSON');
    await expectFailure(add(JSON.stringify({ tasks: [] })), 400, 'name');
    await expectFailure(
      add(
        JSON.stringify({
          name: 'dupes',
          tasks: [
            { name: 'x', type: { plugin: 'Flow/NoOp' } },
            { name: 'x', type: { plugin: 'Flow/NoOp' } },
          ],
        }),
      ),
      400,
      /x/,
    );
    await expectFailure(
      add(
        JSON.stringify({
          name: 'dangling',
          tasks: [{ name: 'x', type: { plugin: 'Flow/NoOp' }, dependencies: ['ghost'] }],
        }),
      ),
      400,
      /ghost/,
    );
    const references = await expectFailure(
      add(
        JSON.stringify({
          name: 'unknown-refs',
          tasks: [
            { name: 'p', type: { plugin: 'Net/Gopher' } },
            { name: 'q', type: { plugin: 'Flow/NoOp', version: '9.0.0' } },
            { name: 'r', type: 'no-such-configuration' },
          ],
        }),
      ),
      400,
    );
    expect(references.messages).toHaveLength(3);
    expect(references.messages.join('\n')).toMatch(/Net\/Gopher/);
    expect(references.messages.join('\n')).toMatch(/9\.0\.0/);
    expect(references.messages.join('\n')).toMatch(/no-such-configuration/);
    expect(await workflowNames()).toEqual(before);
  });

  it("checks each task's parameters against its plugin's schema (400 naming task and parameter), storing nothing", async () => {
    const before = await workflowNames();
    const sum = (parameters: Record<string, unknown>) =>
      JSON.stringify({
        name: 'summing',
        tasks: [{ name: 'Sum', type: { plugin: 'Data/Json' }, parameters }],
      });
    const misspelled = await expectFailure(add(sum({ data: [1, 2], expression: '$sum($)' })), 400);
    expect(misspelled.messages).toEqual([
      'body.definition: tasks[0] "Sum": parameter "data" is not allowed',
    ]);
    const problems = await expectFailure(
      add(
        JSON.stringify({
          name: 'fetching',
          tasks: [
            { name: 'Fetch', type: { plugin: 'Net/Http' } },
            { name: 'Wait', type: { plugin: 'Flow/Delay' }, parameters: { milliseconds: 'long' } },
          ],
        }),
      ),
      400,
    );
    expect(problems.messages).toEqual([
      'body.definition: tasks[0] "Fetch": parameter "url" is required',
      'body.definition: tasks[1] "Wait": parameter "milliseconds" must be integer',
    ]);
    expect(await workflowNames()).toEqual(before);

    // A task named by configuration is checked against the configuration's plugin; values that
    // hold expressions are checked when the task runs.
    await trellis.admin.POST('/config', {
      body: { name: 'summer', type: 'Data/Json', version: '1.0.0', specifications: {} },
    });
    const configuredSum = (parameters: Record<string, unknown>) =>
      JSON.stringify({
        name: 'configured-sum',
        variables: { numbers: [1, 2] },
        tasks: [{ name: 'Sum', type: 'summer', parameters }],
      });
    const configured = await expectFailure(
      add(configuredSum({ input: [1], expresion: '$sum($)' })),
      400,
    );
    expect(configured.messages).toEqual([
      'body.definition: tasks[0] "Sum": parameter "expression" is required',
      'body.definition: tasks[0] "Sum": parameter "expresion" is not allowed',
    ]);
    const { id } = await add(
      configuredSum({ input: "$[Variables('numbers')]", expression: '$sum($)', parseInput: false }),
    );
    const valid = await definitionOf(id);

    // An update is checked the same way and leaves the stored definition as it was.
    await expectFailure(
      trellis.admin.PUT('/workflows/{workflowId}', {
        params: { path: { workflowId: id } },
        body: { workflowId: id, definition: sum({ expression: '$sum($)', parseInput: 'yes' }) },
      }),
      400,
      'body.definition: tasks[0] "Sum": parameter "parseInput" must be boolean',
    );
    expect(await definitionOf(id)).toBe(valid);
  });

  it('answers 409 for a duplicate name, on add and on update, changing nothing', async () => {
    const { id } = await add(simpleDefinition('taken-one'));
    await add(simpleDefinition('taken-two'));
    await expectFailure(add(simpleDefinition('taken-one')), 409, 'taken-one');
    await expectFailure(
      trellis.admin.POST('/workflows', { body: { definition: simpleDefinition('taken-one') } }),
      409,
    );
    await expectFailure(
      trellis.admin.PUT('/workflows/{workflowId}', {
        params: { path: { workflowId: id } },
        body: { workflowId: id, definition: simpleDefinition('taken-two') },
      }),
      409,
      'taken-two',
    );
    expect(await definitionOf(id)).toBe(simpleDefinition('taken-one'));
  });

  it('refuses an update whose body workflowId differs from the path (400), or that is invalid', async () => {
    const { id } = await add(simpleDefinition('mismatch'));
    await expectFailure(
      trellis.admin.PUT('/workflows/{workflowId}', {
        params: { path: { workflowId: id } },
        body: { workflowId: unknownId, definition: simpleDefinition('mismatch-changed') },
      }),
      400,
      'body.workflowId',
    );
    await expectFailure(
      trellis.admin.PUT('/workflows/{workflowId}', {
        params: { path: { workflowId: id } },
        body: { workflowId: id, definition: '{"name": "no-tasks"}' },
      }),
      400,
      'tasks',
    );
    expect(await definitionOf(id)).toBe(simpleDefinition('mismatch'));
  });

  it('answers 400 for a malformed id and 404 for an unknown one', async () => {
    const body = { workflowId: unknownId, definition: simpleDefinition('ghost') };
    await expectFailure(
      trellis.admin.GET('/workflows/{workflowId}', { params: { path: { workflowId: 'nope' } } }),
      400,
      'path.workflowId: must match format "uuid"',
    );
    await expectFailure(
      trellis.admin.DELETE('/workflows/{workflowId}', { params: { path: { workflowId: '1234' } } }),
      400,
    );
    await expectFailure(
      trellis.admin.GET('/workflows/{workflowId}', { params: { path: { workflowId: unknownId } } }),
      404,
      unknownId,
    );
    await expectFailure(
      trellis.admin.PUT('/workflows/{workflowId}', {
        params: { path: { workflowId: unknownId } },
        body,
      }),
      404,
    );
    await expectFailure(
      trellis.admin.DELETE('/workflows/{workflowId}', {
        params: { path: { workflowId: unknownId } },
      }),
      404,
    );
    expect(await workflowNames()).not.toContain('ghost');
  });

  it('validates the body, and rejects malformed JSON (400), text (415) and huge bodies (413)', async () => {
    const before = await workflowNames();
    const error = await expectFailure(
      trellis.admin.POST('/workflows/Add', { body: { definition: 42, extra: true } as never }),
      400,
    );
    expect(error.messages).toEqual(
      expect.arrayContaining([
        'body.definition: must be string or object',
        'body.extra: is not allowed',
      ]),
    );
    await expectRawFailure(
      sendRaw(trellis.baseUrl, 'POST', '/workflows/Add', {
        body: '{"definition": ',
        contentType: 'application/json',
      }),
      400,
    );
    await expectRawFailure(
      sendRaw(trellis.baseUrl, 'POST', '/workflows/Add', {
        body: simpleDefinition('as-text'),
        contentType: 'text/plain',
      }),
      415,
    );
    await expectRawFailure(
      sendRaw(trellis.baseUrl, 'POST', '/workflows', {
        body: JSON.stringify({ definition: ' '.repeat(trellis.config.Server.BodyLimitBytes + 1) }),
        contentType: 'application/json',
      }),
      413,
    );
    expect(await workflowNames()).toEqual(before);
  });

  it('lets the workflow role write and refuses other roles (403) without changes', async () => {
    const client = trellis.client(basicAs('workflow'));
    const { id } = await client.POST('/workflows/Add', {
      body: { definition: simpleDefinition('by-role') },
    });
    await expectFailure(
      trellis
        .client(basicAs('plugins'))
        .DELETE('/workflows/{workflowId}', { params: { path: { workflowId: id } } }),
      403,
    );
    expect(await workflowNames()).toContain('by-role');
    await client.DELETE('/workflows/{workflowId}', { params: { path: { workflowId: id } } });
    expect(await workflowNames()).not.toContain('by-role');
  });

  it('pages the list on request', async () => {
    const page = await trellis.admin.page('/workflows', {
      params: { query: { page: 1, pageSize: 1 } },
    });
    expect(page.data).toHaveLength(1);
    expect(page.pagination.totalCount).toBe((await workflowNames()).length);
  });
});
