import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrellisClient } from '../../sdk/src/index.js';
import { basicAs, clientIn, startTrellis, type Trellis } from '../support/harness.js';
import { expectFailure } from './api-error.js';

// `POST /workflows/apply`: a project's workflows made to match a set of definitions (a folder).
// Each test works in a project of its own, since pruning deletes what the others would have made.

let trellis: Trellis;
beforeAll(async () => {
  trellis = await startTrellis();
});
afterAll(async () => {
  await trellis?.stop();
});

let projects = 0;
async function newProject(): Promise<TrellisClient> {
  const name = `apply-${++projects}`;
  await trellis.admin.POST('/projects', { body: { name } });
  return clientIn(trellis, basicAs('admin'), name);
}

const say = (message: string) => ({
  name: 'Say',
  type: { plugin: 'Flow/Log' },
  parameters: { message },
});
const hello = (message = 'hello') => ({ name: 'Hello', tasks: [say(message)] });
const bye = { name: 'Bye', tasks: [say('bye')] };

type Options = { source?: string; dryRun?: boolean; prune?: boolean; acceptBreaking?: boolean };

function apply(client: TrellisClient, definitions: (string | object)[], options: Options = {}) {
  return client.envelope.POST('/workflows/apply', {
    body: {
      workflows: definitions.map((definition) => ({
        definition: typeof definition === 'string' ? definition : JSON.stringify(definition),
      })),
      ...options,
    },
  });
}

async function stored(client: TrellisClient) {
  const items = await client.GET('/workflows', {});
  return items.map(({ name, revision }) => ({ name, revision }));
}

describe('apply', () => {
  it('as a dry run answers the plan with each diff and stores nothing', async () => {
    const client = await newProject();
    const planned = await apply(client, [hello(), bye], { dryRun: true });
    expect(planned.messages).toEqual([
      'Dry run: 2 to create, 0 to update, 0 unchanged, 0 to delete.',
    ]);
    expect(planned.data.dryRun).toBe(true);
    expect(planned.data.workflows).toEqual([
      { name: 'Hello', action: 'created', id: null, revision: null, diff: expect.any(String) },
      { name: 'Bye', action: 'created', id: null, revision: null, diff: expect.any(String) },
    ]);
    expect(planned.data.workflows[0]!.diff).toBe(
      [
        '--- /dev/null',
        '+++ b/Hello.json',
        '@@ -0,0 +1,14 @@',
        '+{',
        '+  "name": "Hello",',
        '+  "tasks": [',
        '+    {',
        '+      "name": "Say",',
        '+      "parameters": {',
        '+        "message": "hello"',
        '+      },',
        '+      "type": {',
        '+        "plugin": "Flow/Log"',
        '+      }',
        '+    }',
        '+  ]',
        '+}',
        '',
      ].join('\n'),
    );
    expect(await stored(client)).toEqual([]);
  });

  it('adds and updates workflows, recording the source on each revision it stores', async () => {
    const client = await newProject();
    const first = await apply(client, [hello(), bye], { source: 'commit-1' });
    expect(first.messages).toEqual(['Applied: 2 created, 0 updated, 0 unchanged, 0 deleted.']);
    const helloId = first.data.workflows[0]!.id!;
    expect(first.data.workflows[0]).toMatchObject({
      name: 'Hello',
      action: 'created',
      revision: 1,
    });

    const second = await apply(client, [hello('hello again'), bye], { source: 'commit-2' });
    expect(second.messages).toEqual(['Applied: 0 created, 1 updated, 1 unchanged, 0 deleted.']);
    expect(second.data.workflows[0]).toEqual({
      name: 'Hello',
      action: 'updated',
      id: helloId,
      revision: 2,
      diff: expect.stringContaining(
        '-        "message": "hello"\n+        "message": "hello again"\n',
      ),
    });
    expect(second.data.workflows[1]).toMatchObject({ name: 'Bye', action: 'unchanged', diff: '' });

    const revisions = await client.GET('/workflows/{workflowId}/revisions', {
      params: { path: { workflowId: helloId } },
    });
    expect(revisions.map(({ revision, source }) => ({ revision, source }))).toEqual([
      { revision: 2, source: 'commit-2' },
      { revision: 1, source: 'commit-1' },
    ]);
    const [audited] = await client.GET('/audit', {
      params: { query: { operation: 'applyWorkflows', pageSize: 1 } },
    });
    expect(audited).toMatchObject({
      actor: 'admin',
      project: expect.stringMatching(/^apply-/),
      status: 200,
      targets: { 'updated Hello': helloId },
    });

    const latest = await client.GET('/workflows/{workflowId}/revisions/{revision}', {
      params: { path: { workflowId: helloId, revision: 2 } },
    });
    expect(latest.source).toBe('commit-2');
    expect(JSON.parse(latest.workflow)).toEqual(hello('hello again'));
  });

  it('applying the same definitions again changes nothing, whatever their key order and case', async () => {
    const client = await newProject();
    await apply(client, [hello(), bye]);
    const reordered = {
      Tasks: [{ Parameters: { message: 'hello' }, Type: { Plugin: 'Flow/Log' }, Name: 'Say' }],
      Name: 'Hello',
    };
    const again = await apply(client, [JSON.stringify(reordered), bye], { source: 'again' });
    expect(again.messages).toEqual(['Applied: 0 created, 0 updated, 2 unchanged, 0 deleted.']);
    expect(again.data.workflows.map(({ action, diff }) => ({ action, diff }))).toEqual([
      { action: 'unchanged', diff: '' },
      { action: 'unchanged', diff: '' },
    ]);
    expect(await stored(client)).toEqual([
      { name: 'Bye', revision: 1 },
      { name: 'Hello', revision: 1 },
    ]);
  });

  it('refuses everything when one definition is invalid, naming it, and stores nothing', async () => {
    const client = await newProject();
    await apply(client, [hello()]);
    const broken = { name: 'Broken', tasks: [{ name: 'Say', type: { plugin: 'Flow/Missing' } }] };
    const refused = await expectFailure(apply(client, [hello('changed'), bye, broken]), 400);
    expect(refused.errors.map(({ path }) => path)).toEqual(['body.workflows[2].definition']);
    expect(refused.messages[0]).toContain('Flow/Missing');

    const twice = await expectFailure(apply(client, [bye, { ...bye }]), 400);
    expect(twice.errors).toEqual([
      {
        code: 'workflow.name_taken',
        path: 'body.workflows[1].definition',
        message: expect.stringContaining('"Bye" as body.workflows[0].definition does'),
      },
    ]);
    expect(await stored(client)).toEqual([{ name: 'Hello', revision: 1 }]);
  });

  it('refuses a breaking change of the declared inputs unless it is accepted', async () => {
    const client = await newProject();
    const taking = (required: boolean) => ({
      ...hello(),
      inputs: { who: { type: 'string', required } },
    });
    await apply(client, [taking(false)]);
    const refused = await expectFailure(apply(client, [taking(true)]), 409);
    expect(refused.errors[0]).toMatchObject({
      code: 'workflow.breaking_change',
      path: 'body.workflows[0].definition.inputs.who',
      message: expect.stringContaining('workflow "Hello": '),
    });
    expect(await stored(client)).toEqual([{ name: 'Hello', revision: 1 }]);

    const accepted = await apply(client, [taking(true)], { acceptBreaking: true });
    expect(accepted.messages[1]).toMatch(
      /^Workflow "Hello": Breaking changes accepted: inputs\.who/,
    );
    expect(await stored(client)).toEqual([{ name: 'Hello', revision: 2 }]);
  });

  it('with prune deletes the workflows no definition names, in its own project only', async () => {
    const client = await newProject();
    const other = await newProject();
    await apply(client, [hello(), bye]);
    await apply(other, [hello(), bye]);

    const planned = await apply(client, [bye], { prune: true, dryRun: true });
    expect(planned.data.workflows.map(({ name, action }) => `${name} ${action}`)).toEqual([
      'Bye unchanged',
      'Hello deleted',
    ]);
    expect(planned.data.workflows[1]!.diff).toMatch(/^--- a\/Hello\.json\n\+\+\+ \/dev\/null\n/);
    expect(await stored(client)).toHaveLength(2);

    const pruned = await apply(client, [bye], { prune: true });
    expect(pruned.messages).toEqual(['Applied: 0 created, 0 updated, 1 unchanged, 1 deleted.']);
    expect(await stored(client)).toEqual([{ name: 'Bye', revision: 1 }]);
    expect(await stored(other)).toEqual([
      { name: 'Bye', revision: 1 },
      { name: 'Hello', revision: 1 },
    ]);

    const without = await apply(client, [], {});
    expect(without.data.workflows).toEqual([]);
    expect(await stored(client)).toEqual([{ name: 'Bye', revision: 1 }]);
  });

  it('is refused to a caller without the workflow role', async () => {
    const plugins = clientIn(trellis, basicAs('plugins'));
    await expectFailure(apply(plugins, [hello()]), 403);
  });
});
