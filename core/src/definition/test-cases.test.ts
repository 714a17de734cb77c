import { describe, expect, it } from 'vitest';
import { parseDefinition } from './parse.js';
import { judgeTestCase } from './test-cases.js';
import type { WorkflowTestCase } from './types.js';
import { renderProblem } from './validation/problem.js';

const base = {
  name: 'Sum',
  inputs: { count: { type: 'integer', required: true } },
  outputs: { total: "Outputs('Add').total" },
  tasks: [
    { name: 'Add', type: { plugin: 'Flow/NoOp' } },
    { name: 'Child', workflow: '0a000000-0000-4000-8000-000000000000', dependencies: ['Add'] },
  ],
};

const problemsOf = (tests: unknown[]) => {
  const parsed = parseDefinition(JSON.stringify({ ...base, tests }));
  return parsed.ok ? [] : parsed.problems.map(renderProblem);
};

describe('test cases in a definition', () => {
  it('accepts cases that fit the definition, keys in any case', () => {
    const parsed = parseDefinition(
      JSON.stringify({
        ...base,
        Tests: [
          {
            Name: 'adds',
            Inputs: { count: 2 },
            Mocks: { Add: { total: 2 } },
            Expect: { Outputs: { total: 2 } },
          },
        ],
      }),
    );
    expect(parsed.ok && parsed.definition.tests).toEqual([
      {
        name: 'adds',
        inputs: { count: 2 },
        mocks: { Add: { total: 2 } },
        expect: { outputs: { total: 2 } },
      },
    ]);
  });

  it('names each problem of a case by its place', () => {
    expect(
      problemsOf([
        { name: 'a', inputs: { count: 1 }, expect: {} },
        {
          name: 'a',
          inputs: { count: 'x', other: 1 },
          mocks: { Ad: {}, Child: {} },
          expect: { status: 'Completed', failure: 'boom', outputs: { totl: 1 } },
        },
        { name: 'b', expect: { failure: 'boom', outputs: { total: 1 } } },
      ]),
    ).toEqual([
      'tests[1].name: repeats the name of tests[0] ("a"): each case needs its own',
      "tests[1].mocks.Ad: names no task of the workflow (Ad) (did you mean 'Add'?)",
      'tests[1].mocks.Child: is a subworkflow task, whose child runs as a dry run itself: it takes no mock',
      'tests[1].inputs.count: must be an integer, not the string "x"',
      'tests[1].inputs.other: is not a declared input (declared: count)',
      'tests[1].expect.failure: is the message of a failed run: the case expects Completed',
      "tests[1].expect.outputs.totl: is not a declared output (declared: total) (did you mean 'total'?)",
      'tests[2].inputs.count: is required (integer)',
      'tests[2].expect.outputs: a failed run gives no outputs: the case expects Failed',
    ]);
  });

  it('refuses a case without expect or name', () => {
    expect(problemsOf([{ name: '' }]).join('\n')).toMatch(/tests\[0\]/);
  });
});

describe('judgeTestCase', () => {
  const testCase = (expect: WorkflowTestCase['expect']): WorkflowTestCase => ({
    name: 'c',
    expect,
  });

  it('passes a run that ends as expected, outputs not named unchecked', () => {
    expect(
      judgeTestCase(testCase({ outputs: { total: 3 } }), {
        status: 'Completed',
        outputs: { total: 3, other: 'x' },
        message: '',
      }),
    ).toEqual([]);
  });

  it('tells each differing output by its path', () => {
    const failures = judgeTestCase(
      testCase({
        outputs: { total: 3, items: [{ id: 1 }, { id: 2 }], missing: true, nested: { a: 1 } },
      }),
      {
        status: 'Completed',
        outputs: { total: 4, items: [{ id: 1 }, { id: 5 }], nested: { a: 1, b: 2 } },
        message: '',
      },
    );
    expect(failures).toEqual([
      { path: 'outputs.total', expected: 3, actual: 4, message: 'expected 3, got 4' },
      { path: 'outputs.items[1].id', expected: 2, actual: 5, message: 'expected 2, got 5' },
      {
        path: 'outputs.missing',
        expected: true,
        actual: null,
        message: 'expected true, the run gave none',
      },
      { path: 'outputs.nested.b', expected: null, actual: 2, message: 'expected no "b", got 2' },
    ]);
  });

  it('fails on another status, saying why the run failed', () => {
    expect(
      judgeTestCase(testCase({}), {
        status: 'Failed',
        outputs: null,
        message: 'Task "Add" failed',
      }),
    ).toEqual([
      {
        path: 'status',
        expected: 'Completed',
        actual: 'Failed',
        message: 'expected the run to end Completed, it ended Failed (Task "Add" failed)',
      },
    ]);
  });

  it('expects Failed with a failure text, which the message must contain', () => {
    const expected = testCase({ failure: 'too large' });
    expect(
      judgeTestCase(expected, { status: 'Failed', outputs: null, message: 'Add: value too large' }),
    ).toEqual([]);
    expect(
      judgeTestCase(expected, { status: 'Failed', outputs: null, message: 'Add: timed out' })[0]
        ?.path,
    ).toBe('failure');
    expect(
      judgeTestCase(expected, { status: 'Completed', outputs: {}, message: '' })[0]?.message,
    ).toBe('expected the run to end Failed, it ended Completed');
  });
});
