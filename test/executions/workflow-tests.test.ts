/**
 * Issue 33, workflow tests: a definition's `tests` are checked when it is stored, and
 * `POST /workflows/{workflowId}/tests` runs them as dry runs (of the current revision, or of a
 * candidate definition stored nowhere) and reports each case: passed or not, why, its execution.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisApiError } from '../../sdk/src/index.js';
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

const priceReply = (price: unknown) => ({
  status: 200,
  statusText: 'OK',
  ok: true,
  url: `${origin}/price`,
  headers: {},
  body: { price },
});

/** Fetches a price (HTTP, never reached by a test) and multiplies it by the quantity (pure). */
function priceFlow(
  tests: unknown[],
  expression = "$[Outputs('Fetch').body.price] * $[Inputs('qty')]",
) {
  return definition(
    [
      { name: 'Fetch', type: { plugin: 'Net/Http' }, parameters: { url: `${origin}/price` } },
      {
        name: 'Total',
        type: { plugin: 'Data/Json' },
        dependencies: ['Fetch'],
        parameters: { expression, input: {} },
      },
    ],
    {
      inputs: { qty: { type: 'integer', required: true } },
      outputs: { total: "Outputs('Total').result" },
      tests,
    },
  );
}

const cases = [
  {
    name: 'three items',
    inputs: { qty: 3 },
    mocks: { Fetch: priceReply(5) },
    expect: { outputs: { total: 15 } },
  },
  {
    name: 'wrong sum',
    inputs: { qty: 2 },
    mocks: { Fetch: priceReply(5) },
    expect: { outputs: { total: 11 } },
  },
  {
    name: 'price breaks the expression',
    inputs: { qty: 2 },
    mocks: { Fetch: priceReply('(') },
    expect: { failure: 'Total' },
  },
  {
    name: 'another failure',
    inputs: { qty: 2 },
    mocks: { Fetch: priceReply('(') },
    expect: { failure: 'timed out' },
  },
];

describe('workflow tests', () => {
  it('runs each case as a dry run and reports passed, failed with each difference, and the execution', async () => {
    const def = priceFlow(cases);
    const workflowId = await addWorkflow(trellis.admin, def);

    const report = await trellis.admin.POST('/workflows/{workflowId}/tests', {
      params: { path: { workflowId } },
      body: {},
    });

    expect(report).toMatchObject({ workflowId, name: def.name, revision: 1, passed: 2, failed: 2 });
    const failed = await trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
      params: { path: { workflowId, executionId: report.cases[2]!.executionId } },
    });
    const failedMessage = failed.message;
    expect(failedMessage).toContain('Total');
    expect(
      report.cases.map(({ name, passed, status, failures }) => ({
        name,
        passed,
        status,
        failures,
      })),
    ).toEqual([
      { name: 'three items', passed: true, status: 'Completed', failures: [] },
      {
        name: 'wrong sum',
        passed: false,
        status: 'Completed',
        failures: [
          { path: 'outputs.total', expected: 11, actual: 10, message: 'expected 11, got 10' },
        ],
      },
      { name: 'price breaks the expression', passed: true, status: 'Failed', failures: [] },
      {
        name: 'another failure',
        passed: false,
        status: 'Failed',
        failures: [
          {
            path: 'failure',
            expected: 'timed out',
            actual: failedMessage,
            message: `expected the failure message to contain "timed out", it is ${JSON.stringify(failedMessage)}`,
          },
        ],
      },
    ]);
    for (const result of report.cases) {
      expect(result.durationMilliseconds).toBeGreaterThanOrEqual(0);
      const execution = await trellis.admin.GET(
        '/workflows/{workflowId}/executions/{executionId}',
        {
          params: { path: { workflowId, executionId: result.executionId } },
        },
      );
      expect(execution).toMatchObject({ dryRun: true, revision: 1 });
    }
    expect(received).not.toContain('/price');
  });

  it('runs the cases of a candidate definition, stored nowhere but in its dry runs, and only the cases asked for', async () => {
    const def = priceFlow(cases);
    const workflowId = await addWorkflow(trellis.admin, def);
    const candidate = priceFlow(
      [{ ...cases[1]!, expect: { outputs: { total: 11 } } }],
      "$[Outputs('Fetch').body.price] * $[Inputs('qty')] + 1",
    );

    const report = await trellis.admin.POST('/workflows/{workflowId}/tests', {
      params: { path: { workflowId } },
      body: { definition: JSON.stringify({ ...candidate, name: def.name }), cases: ['wrong sum'] },
    });

    expect(report).toMatchObject({ revision: null, passed: 1, failed: 0 });
    const execution = await trellis.admin.GET('/workflows/{workflowId}/executions/{executionId}', {
      params: { path: { workflowId, executionId: report.cases[0]!.executionId } },
    });
    expect(execution).toMatchObject({ dryRun: true, revision: null, outputs: { total: 11 } });
    expect(execution.workflow).toContain('+ 1');
    const stored = await trellis.admin.GET('/workflows/{workflowId}', {
      params: { path: { workflowId } },
    });
    expect(stored.revision).toBe(1);
    expect(stored.workflow).not.toContain('+ 1');

    // Its snapshot is a candidate: rerunning it would run that for real.
    const rerun = await errorOf(
      trellis.admin.POST('/workflows/{workflowId}/executions/{executionId}/rerun', {
        params: { path: { workflowId, executionId: report.cases[0]!.executionId } },
        body: {},
      }),
      TrellisApiError,
    );
    expect(rerun.status).toBe(409);
    expect(rerun.messages.join('\n')).toContain('test case "wrong sum"');
  });

  it('takes no recorded output: a case gives the same result after a real run', async () => {
    const def = definition(
      [{ name: 'Fetch', type: { plugin: 'Net/Http' }, parameters: { url: `${origin}/real` } }],
      {
        outputs: { status: "Outputs('Fetch').status" },
        tests: [{ name: 'generated', expect: { outputs: { status: 0 } } }],
      },
    );
    const workflowId = await addWorkflow(trellis.admin, def);
    const real = await trellis.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId }, query: { waitSeconds: 60 } },
      body: {},
    });
    expect(real).toMatchObject({ status: 'Completed', outputs: { status: 200 } });

    const report = await trellis.admin.POST('/workflows/{workflowId}/tests', {
      params: { path: { workflowId } },
      body: {},
    });
    expect(report.cases[0]).toMatchObject({ passed: true, failures: [] });
  });

  it("takes no recorded output in a subworkflow's child either", async () => {
    const child = definition(
      [{ name: 'Fetch', type: { plugin: 'Net/Http' }, parameters: { url: `${origin}/child` } }],
      { outputs: { status: "Outputs('Fetch').status" } },
    );
    const childId = await addWorkflow(trellis.admin, child);
    const real = await trellis.admin.POST('/workflows/{workflowId}/executions', {
      params: { path: { workflowId: childId }, query: { waitSeconds: 60 } },
      body: {},
    });
    expect(real).toMatchObject({ status: 'Completed', outputs: { status: 200 } });
    const parent = definition([{ name: 'Call', workflow: childId }], {
      outputs: { status: "Outputs('Call').status" },
      tests: [{ name: 'generated below', expect: { outputs: { status: 0 } } }],
    });
    const parentId = await addWorkflow(trellis.admin, parent);

    const report = await trellis.admin.POST('/workflows/{workflowId}/tests', {
      params: { path: { workflowId: parentId } },
      body: {},
    });
    expect(report.cases[0]).toMatchObject({ passed: true, failures: [] });
  });

  it('refuses bad cases where a definition is stored or tested, naming each place (400, nothing stored or started)', async () => {
    const bad = priceFlow([
      { name: 'a', inputs: { qty: 1 }, mocks: { Fetsh: {} }, expect: {} },
      { name: 'a', inputs: { qty: 1 }, mocks: { Fetch: { status: 'many' } }, expect: {} },
    ]);
    const added = await errorOf(
      trellis.admin.POST('/workflows/Add', { body: { definition: JSON.stringify(bad) } }),
      TrellisApiError,
    );
    expect(added.status).toBe(400);
    const told = added.messages.join('\n');
    expect(told).toContain(
      "body.definition: tests[0].mocks.Fetsh: names no task of the workflow (Fetsh) (did you mean 'Fetch'?)",
    );
    expect(told).toContain('body.definition: tests[1].name: repeats the name of tests[0] ("a")');

    const good = priceFlow(cases);
    const workflowId = await addWorkflow(trellis.admin, good);
    const misfit = priceFlow([
      { name: 'a', inputs: { qty: 1 }, mocks: { Fetch: { status: 'many' } }, expect: {} },
    ]);
    const candidate = await errorOf(
      trellis.admin.POST('/workflows/{workflowId}/tests', {
        params: { path: { workflowId } },
        body: { definition: JSON.stringify(misfit) },
      }),
      TrellisApiError,
    );
    expect(candidate.status).toBe(400);
    expect(candidate.messages.join('\n')).toMatch(
      /body\.definition: tests\[0\]\.mocks\.Fetch.*Net\/Http/,
    );

    const unknownCase = await errorOf(
      trellis.admin.POST('/workflows/{workflowId}/tests', {
        params: { path: { workflowId } },
        body: { cases: ['three items', 'four items'] },
      }),
      TrellisApiError,
    );
    expect(unknownCase.status).toBe(400);
    expect(unknownCase.messages.join('\n')).toContain('body.cases[1]: names no test case');

    const runs = await trellis.admin.GET('/workflows/{workflowId}/executions', {
      params: { path: { workflowId } },
    });
    expect(runs).toEqual([]);
  });

  it("answers 404 for another project's workflow, and records the run in the audit trail", async () => {
    const workflowId = await addWorkflow(trellis.admin, priceFlow(cases.slice(0, 1)));
    await trellis.admin.POST('/projects', { body: { name: 'elsewhere' } });
    const elsewhere = clientIn(trellis, basicAs('admin'), 'elsewhere');
    const hidden = await errorOf(
      elsewhere.POST('/workflows/{workflowId}/tests', {
        params: { path: { workflowId } },
        body: {},
      }),
      TrellisApiError,
    );
    expect(hidden.status).toBe(404);

    await trellis.admin.POST('/workflows/{workflowId}/tests', {
      params: { path: { workflowId } },
      body: {},
    });
    const [entry] = await trellis.admin.GET('/audit', {
      params: { query: { operation: 'runWorkflowTests', pageSize: 1 } },
    });
    expect(entry).toMatchObject({ status: 200 });
    expect(JSON.stringify(entry)).toContain(workflowId);
  });
});
