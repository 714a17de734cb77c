/**
 * A workflow's test cases (the definition's `tests`): what a definition's cases must be to be
 * stored, and whether a case's run ended as the case expects. The engine never reads `tests`;
 * the application runs each case as a dry run. Pure.
 */
import { resolveInputs } from './inputs.js';
import { formatPath, problemIn } from './location.js';
import { didYouMean, suggestionsFor } from './suggestions.js';
import type { WorkflowDefinition, WorkflowTestCase } from './types.js';
import { withSuggestions, type Problem } from './validation/problem.js';

/** How a test case's run ended, as its execution row says. */
export interface TestCaseRun {
  status: string;
  outputs: Record<string, unknown> | null;
  /** The execution's message: why it failed, for a failed run. */
  message: string;
}

/** One way a run differs from what its case expects. */
export interface TestCaseFailure {
  /** `status`, `failure`, or an output's place: `outputs.items[0].id`. */
  path: string;
  expected: unknown;
  actual: unknown;
  message: string;
}

/**
 * The problems of a definition's test cases that the definition alone shows: a name used twice,
 * a mock for no task or for a subworkflow task, inputs that do not fit the declared ones, an
 * expected output the definition does not declare, and an expectation that contradicts itself.
 * Whether a mock fits its plugin's output schema needs the installed plugins: the application's.
 */
export function checkTestCases(definition: WorkflowDefinition): Problem[] {
  const problems: Problem[] = [];
  const tasks = new Map(definition.tasks.map((task) => [task.name, task]));
  const declaredOutputs = Object.keys(definition.outputs ?? {});
  const firstOfName = new Map<string, number>();
  (definition.tests ?? []).forEach((testCase, index) => {
    const at = ['tests', index] as const;
    const earlier = firstOfName.get(testCase.name);
    if (earlier === undefined) firstOfName.set(testCase.name, index);
    else {
      problems.push(
        problemIn(
          [...at, 'name'],
          `repeats the name of tests[${earlier}] ("${testCase.name}"): each case needs its own`,
        ),
      );
    }
    for (const name of Object.keys(testCase.mocks ?? {})) {
      const task = tasks.get(name);
      if (task === undefined) {
        const near = suggestionsFor(name, tasks.keys());
        problems.push(
          withSuggestions(
            problemIn(
              [...at, 'mocks', name],
              `names no task of the workflow (${name})${didYouMean(near)}`,
              'validation.unknown',
            ),
            near,
          ),
        );
      } else if (task.type === undefined) {
        problems.push(
          problemIn(
            [...at, 'mocks', name],
            'is a subworkflow task, whose child runs as a dry run itself: it takes no mock',
          ),
        );
      }
    }
    const inputs = resolveInputs(definition, testCase.inputs, [...at, 'inputs']);
    if (!inputs.ok) problems.push(...inputs.problems);
    problems.push(...expectationProblems(testCase, declaredOutputs, [...at, 'expect']));
  });
  return problems;
}

function expectationProblems(
  testCase: WorkflowTestCase,
  declaredOutputs: readonly string[],
  at: readonly (string | number)[],
): Problem[] {
  const { status, outputs, failure } = testCase.expect;
  const problems: Problem[] = [];
  if (status === 'Completed' && failure !== undefined) {
    problems.push(
      problemIn([...at, 'failure'], 'is the message of a failed run: the case expects Completed'),
    );
  }
  if (expectedStatus(testCase) === 'Failed' && outputs !== undefined) {
    problems.push(
      problemIn([...at, 'outputs'], 'a failed run gives no outputs: the case expects Failed'),
    );
  }
  for (const name of Object.keys(outputs ?? {})) {
    if (declaredOutputs.includes(name)) continue;
    const listed =
      declaredOutputs.length > 0
        ? `declared: ${declaredOutputs.join(', ')}`
        : 'the workflow declares none';
    const near = suggestionsFor(name, declaredOutputs);
    problems.push(
      withSuggestions(
        problemIn(
          [...at, 'outputs', name],
          `is not a declared output (${listed})${didYouMean(near)}`,
          'validation.unknown',
        ),
        near,
      ),
    );
  }
  return problems;
}

/** The status a case expects: as given, else Failed when it expects a failure, else Completed. */
export function expectedStatus(testCase: WorkflowTestCase): 'Completed' | 'Failed' {
  return testCase.expect.status ?? (testCase.expect.failure !== undefined ? 'Failed' : 'Completed');
}

/** How the run differs from what the case expects; none when it passed. */
export function judgeTestCase(testCase: WorkflowTestCase, run: TestCaseRun): TestCaseFailure[] {
  const status = expectedStatus(testCase);
  if (run.status !== status) {
    const why = run.status === 'Failed' && run.message ? ` (${run.message})` : '';
    return [
      {
        path: 'status',
        expected: status,
        actual: run.status,
        message: `expected the run to end ${status}, it ended ${run.status}${why}`,
      },
    ];
  }
  const failures: TestCaseFailure[] = [];
  const { failure, outputs } = testCase.expect;
  if (failure !== undefined && !run.message.includes(failure)) {
    failures.push({
      path: 'failure',
      expected: failure,
      actual: run.message,
      message: `expected the failure message to contain ${JSON.stringify(failure)}, it is ${JSON.stringify(run.message)}`,
    });
  }
  const actual = run.outputs ?? {};
  for (const [name, expected] of Object.entries(outputs ?? {})) {
    failures.push(
      ...jsonDifferences(expected, Object.hasOwn(actual, name) ? actual[name] : undefined, [
        'outputs',
        name,
      ]),
    );
  }
  return failures;
}

/** Where `actual` differs from `expected`: objects key by key, arrays item by item. */
export function jsonDifferences(
  expected: unknown,
  actual: unknown,
  at: (string | number)[],
): TestCaseFailure[] {
  const path = formatPath(at);
  const differs = (message: string): TestCaseFailure[] => [
    { path, expected, actual: actual === undefined ? null : actual, message },
  ];
  if (actual === undefined) return differs(`expected ${shown(expected)}, the run gave none`);
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return differs(`expected an array, got ${shown(actual)}`);
    if (actual.length !== expected.length) {
      return differs(`expected ${expected.length} items, got ${actual.length}`);
    }
    return expected.flatMap((item, index) => jsonDifferences(item, actual[index], [...at, index]));
  }
  if (isObject(expected)) {
    if (!isObject(actual)) return differs(`expected an object, got ${shown(actual)}`);
    const found = Object.entries(expected).flatMap(([key, value]) =>
      jsonDifferences(value, Object.hasOwn(actual, key) ? actual[key] : undefined, [...at, key]),
    );
    const unexpected = Object.keys(actual).filter((key) => !Object.hasOwn(expected, key));
    for (const key of unexpected) {
      found.push({
        path: formatPath([...at, key]),
        expected: null,
        actual: actual[key],
        message: `expected no ${JSON.stringify(key)}, got ${shown(actual[key])}`,
      });
    }
    return found;
  }
  return expected === actual ? [] : differs(`expected ${shown(expected)}, got ${shown(actual)}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const shown = (value: unknown) => JSON.stringify(value) ?? String(value);
