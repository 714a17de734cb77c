/**
 * Issue 33, the tests of a new workflow: `POST /workflows/tests` runs the test cases of a
 * definition the project does not store yet as dry runs, reports them as the per-workflow
 * operation does, and leaves nothing a person sees: no workflow, no execution in any list or
 * figure, the name still free; its runs are removed once their hour has passed, or with its project.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisApiError, type TrellisClient } from '../../sdk/src/index.js';
import {
  basicAs,
  clientIn,
  loopbackAllowed,
  startTrellis,
  type Trellis,
} from '../support/harness.js';
import { errorOf } from '../support/expect-error.js';
import { startRecordingReceiver, type RecordingReceiver } from '../support/recording-receiver.js';
import { addWorkflow, definition } from '../support/engine-support.js';

let trellis: Trellis;
let receiver: RecordingReceiver;
let origin: string;
/** The paths the HTTP receiver was asked for: a test case's HTTP task must never reach it. */
let received: string[];

beforeAll(async () => {
  receiver = await startRecordingReceiver({ price: 7 });
  ({ origin, received } = receiver);
  trellis = await startTrellis({ worker: true, config: loopbackAllowed });
});
afterAll(async () => {
  await trellis?.stop();
  await receiver?.close();
});

let projects = 0;
/** A project of its own, so that lists and figures hold only what one test made. */
async function newProject(): Promise<{ name: string; api: TrellisClient }> {
  const name = `candidate-tests-${++projects}`;
  await trellis.admin.POST('/projects', { body: { name } });
  return { name, api: clientIn(trellis, basicAs('admin'), name) };
}

const priceReply = (price: unknown) => ({
  status: 200,
  statusText: 'OK',
  ok: true,
  url: `${origin}/new-price`,
  headers: {},
  body: { price },
});

/** Fetches a price (HTTP, never reached by a test) and multiplies it by the quantity (pure). */
function priceFlow(expected: number) {
  return definition(
    [
      { name: 'Fetch', type: { plugin: 'Net/Http' }, parameters: { url: `${origin}/new-price` } },
      {
        name: 'Total',
        type: { plugin: 'Data/Json' },
        dependencies: ['Fetch'],
        parameters: { expression: "$[Outputs('Fetch').body.price] * $[Inputs('qty')]", input: {} },
      },
    ],
    {
      inputs: { qty: { type: 'integer', required: true } },
      outputs: { total: "Outputs('Total').result" },
      tests: [
        {
          name: 'three items',
          inputs: { qty: 3 },
          mocks: { Fetch: priceReply(5) },
          expect: { outputs: { total: expected } },
        },
        {
          name: 'no price',
          inputs: { qty: 1 },
          mocks: { Fetch: priceReply('(') },
          expect: { failure: 'Total' },
        },
      ],
    },
  );
}

/** The project's runs as the explorer, the overview and the database see them. */
async function runsSeen(api: TrellisClient, project: string) {
  const listed = await api.GET('/executions', {});
  const summary = await api.GET('/executions/summary', {});
  const { rows } = await sql<{ count: string }>`
    select count(*) from workflow_execution e join project p on p.id = e.project_id
     where p.name = ${project}`.execute(trellis.db);
  return { listed: listed.length, dryRuns: summary.dryRuns, stored: Number(rows[0]!.count) };
}

describe('the tests of a new workflow', () => {
  it('runs its cases as dry runs and reports them, and nothing shows a workflow or a run', async () => {
    const { name: project, api } = await newProject();
    const def = priceFlow(16);

    const report = await api.POST('/workflows/tests', {
      body: { definition: JSON.stringify(def) },
    });

    expect(report).toMatchObject({ name: def.name, passed: 1, failed: 1 });
    expect(report).not.toHaveProperty('workflowId');
    const draftId = report.draftWorkflowId!;
    expect(
      report.cases.map(({ name, passed, status, failures }) => ({
        name,
        passed,
        status,
        failures,
      })),
    ).toEqual([
      {
        name: 'three items',
        passed: false,
        status: 'Completed',
        failures: [
          { path: 'outputs.total', expected: 16, actual: 15, message: 'expected 16, got 15' },
        ],
      },
      { name: 'no price', passed: true, status: 'Failed', failures: [] },
    ]);
    expect(received).not.toContain('/new-price');

    expect(await api.GET('/workflows', {})).toEqual([]);
    expect(await runsSeen(api, project)).toEqual({ listed: 0, dryRuns: 0, stored: 2 });
    // The runs can be opened; their draft is no workflow: no operation finds it, nor runs it.
    const opened = await api.GET('/workflows/{workflowId}/executions/{executionId}', {
      params: { path: { workflowId: draftId, executionId: report.cases[0]!.executionId } },
    });
    expect(opened).toMatchObject({ dryRun: true, revision: null, status: 'Completed' });
    for (const call of [
      () => api.GET('/workflows/{workflowId}', { params: { path: { workflowId: draftId } } }),
      () =>
        api.POST('/workflows/{workflowId}/executions', {
          params: { path: { workflowId: draftId } },
          body: {},
        }),
      () =>
        api.PUT('/workflows/{workflowId}', {
          params: { path: { workflowId: draftId } },
          body: { workflowId: draftId, definition: JSON.stringify(def) },
        }),
      () =>
        api.GET('/workflows/{workflowId}/executions', {
          params: { path: { workflowId: draftId } },
        }),
      () =>
        api.GET('/workflows/{workflowId}/triggers', { params: { path: { workflowId: draftId } } }),
    ]) {
      expect((await errorOf(call(), TrellisApiError)).status).toBe(404);
    }
    // A bulk action finds them as it finds no execution.
    const bulk = (id: string) =>
      api.POST('/executions/cancel', { body: { ids: [id], preview: true } });
    const unknown = crypto.randomUUID();
    expect(
      JSON.stringify(await bulk(report.cases[0]!.executionId)).replaceAll(
        report.cases[0]!.executionId,
        unknown,
      ),
    ).toBe(JSON.stringify(await bulk(unknown)));

    // Its name is free: the workflow is added as any other, and its tests run there.
    const workflowId = await addWorkflow(api, priceFlow(15));
    expect((await api.GET('/workflows', {})).map((workflow) => workflow.id)).toEqual([workflowId]);
    const stored = await api.POST('/workflows/{workflowId}/tests', {
      params: { path: { workflowId } },
      body: {},
    });
    expect(stored).toMatchObject({ workflowId, revision: 1, passed: 2, failed: 0 });
    expect(await runsSeen(api, project)).toEqual({ listed: 2, dryRuns: 2, stored: 4 });
  });

  it('refuses a definition the project stores, an invalid one and an unknown case, starting nothing', async () => {
    const { name: project, api } = await newProject();
    const def = priceFlow(15);
    const workflowId = await addWorkflow(api, def);

    const taken = await errorOf(
      api.POST('/workflows/tests', { body: { definition: JSON.stringify(def) } }),
      TrellisApiError,
    );
    expect(taken.status).toBe(409);
    expect(taken.codes).toEqual(['workflow.name_taken']);
    expect(taken.messages.join('\n')).toContain(`POST /workflows/${workflowId}/tests`);

    const invalid = await errorOf(
      api.POST('/workflows/tests', {
        body: {
          definition: JSON.stringify({
            ...priceFlow(15),
            tests: [{ name: 'a', inputs: { qty: 1 }, mocks: { Fetsh: {} }, expect: {} }],
          }),
        },
      }),
      TrellisApiError,
    );
    expect(invalid.status).toBe(400);
    expect(invalid.messages.join('\n')).toContain(
      'body.definition: tests[0].mocks.Fetsh: names no task of the workflow',
    );

    const unknownCase = await errorOf(
      api.POST('/workflows/tests', {
        body: { definition: JSON.stringify(priceFlow(15)), cases: ['three items', 'four'] },
      }),
      TrellisApiError,
    );
    expect(unknownCase.status).toBe(400);
    expect(unknownCase.messages.join('\n')).toContain('body.cases[1]: names no test case');

    const none = await api.POST('/workflows/tests', {
      body: {
        definition: JSON.stringify(definition([{ name: 'A', type: { plugin: 'Flow/NoOp' } }])),
      },
    });
    expect(none).toMatchObject({ draftWorkflowId: null, passed: 0, failed: 0, cases: [] });
    expect(await runsSeen(api, project)).toEqual({ listed: 0, dryRuns: 0, stored: 0 });
    const { rows } = await sql<{ count: string }>`
      select count(*) from workflow w join project p on p.id = w.project_id
       where p.name = ${project}`.execute(trellis.db);
    expect(Number(rows[0]!.count)).toBe(1);
  });

  it("keeps to its project, answers by the caller's roles, and is in the audit trail", async () => {
    const { name: project, api } = await newProject();
    const { name: otherProject, api: other } = await newProject();
    const def = priceFlow(15);
    // Another project's workflow of the same name takes nothing from this one.
    await addWorkflow(other, def);

    const report = await api.POST('/workflows/tests', {
      body: { definition: JSON.stringify(def), cases: ['three items'] },
    });
    expect(report).toMatchObject({ passed: 1, failed: 0 });
    expect(await runsSeen(other, otherProject)).toEqual({ listed: 0, dryRuns: 0, stored: 0 });
    expect(await runsSeen(api, project)).toEqual({ listed: 0, dryRuns: 0, stored: 1 });

    const missing = await errorOf(
      clientIn(trellis, basicAs('admin'), 'no-such-project').POST('/workflows/tests', {
        body: { definition: JSON.stringify(def) },
      }),
      TrellisApiError,
    );
    expect(missing.status).toBe(404);
    const viewer = await errorOf(
      clientIn(trellis, basicAs('config'), 'default').POST('/workflows/tests', {
        body: { definition: JSON.stringify(def) },
      }),
      TrellisApiError,
    );
    expect(viewer.status).toBe(403);

    const [entry] = await trellis.admin.GET('/audit', {
      params: { query: { operation: 'runCandidateTests', project, pageSize: 1 } },
    });
    expect(entry).toMatchObject({ status: 200, project });
    expect(entry?.targets).toEqual({
      draftWorkflowId: report.draftWorkflowId,
      'test case three items': report.cases[0]!.executionId,
    });
  });

  it('removes the runs of a new workflow once their hour has passed, and not before', async () => {
    const { name: project, api } = await newProject();
    const def = priceFlow(15);
    await api.POST('/workflows/tests', { body: { definition: JSON.stringify(def) } });
    await api.POST('/workflows/tests', { body: { definition: JSON.stringify(def) } });
    expect((await runsSeen(api, project)).stored).toBe(4);

    // The first run's hour has passed (moved back, as time would).
    await sql`
      update workflow set draft_until = now() - interval '1 minute'
       where id = (select w.id from workflow w join project p on p.id = w.project_id
                    where p.name = ${project} and w.draft_until is not null
                    order by w.created_at limit 1)`.execute(trellis.db);
    await api.POST('/workflows/tests', {
      body: { definition: JSON.stringify(def), cases: ['no price'] },
    });

    expect((await runsSeen(api, project)).stored).toBe(3);
  });

  it("goes with its project: a project whose only runs are a new workflow's tests is deleted", async () => {
    const { name: project, api } = await newProject();
    await api.POST('/workflows/tests', { body: { definition: JSON.stringify(priceFlow(15)) } });

    await trellis.admin.DELETE('/projects/{projectId}', {
      params: { path: { projectId: project } },
    });

    const gone = await errorOf(
      trellis.admin.GET('/projects/{projectId}', { params: { path: { projectId: project } } }),
      TrellisApiError,
    );
    expect(gone.status).toBe(404);
  });
});
