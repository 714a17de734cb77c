/**
 * A workflow's test cases (the definition's `tests`) run as dry runs: of its current revision, or
 * of a candidate definition that is stored nowhere but in each case's execution snapshot (with
 * no revision), so that a change can be tested before it is published; or of a definition the
 * project does not store at all (a new workflow's), whose runs hang on a draft workflow row that
 * nothing lists and that a later test run of the project removes once its hour has passed. Each
 * case is one execution, started here; the caller waits for them and then judges them here.
 */
import * as executionRepository from '#store/execution-repository.js';
import * as workflowRepository from '#store/workflow-repository.js';
import type { ExecutionStatus, WorkflowRow } from '#store/tables.js';
import { Conflict, Invalid } from '#definition/errors.js';
import { judgeTestCase, type TestCaseFailure } from '#definition/test-cases.js';
import type { WorkflowDefinition, WorkflowTestCase } from '#definition/types.js';
import { formatPath } from '#definition/location.js';
import { problemAt } from '#definition/validation/problem.js';
import {
  checkedSnapshot,
  startExecution,
  type StartExecutionDeps,
  type StartOptions,
} from '../executions/start-execution.js';
import { validateWorkflowDefinition } from './validate-definition.js';

export interface TestRunRequest {
  /** A candidate definition's text (`body.definition`), tested instead of the current revision. */
  candidate?: string;
  /** Only the cases of these names (`body.cases`). */
  cases?: readonly string[];
  /** Who runs the tests: each case's run is started by them. */
  startedBy: string;
}

/** The cases started: the definition they test, and one execution per case (of `runsOf`). */
export interface StartedTests {
  /**
   * The workflow row the cases' runs are executions of: the tested one, or a draft; null when no
   * case ran.
   */
  runsOf: string | null;
  name: string;
  /** The revision tested; null for a candidate. */
  revision: number | null;
  cases: { testCase: WorkflowTestCase; executionId: string }[];
}

export interface TestCaseResult {
  name: string;
  passed: boolean;
  status: ExecutionStatus;
  failures: TestCaseFailure[];
  executionId: string;
  durationMilliseconds: number;
}

/**
 * Validates the definition to test (a candidate as an update would be: 400 naming
 * `body.definition`) and the cases asked for (400 naming `body.cases[i]`), then starts each case
 * as a dry run with its inputs and mocks. A definition without cases starts nothing.
 */
export async function startWorkflowTests(
  deps: StartExecutionDeps,
  workflow: WorkflowRow,
  request: TestRunRequest,
): Promise<StartedTests> {
  const candidate =
    request.candidate === undefined
      ? undefined
      : {
          text: request.candidate,
          definition: await validateWorkflowDefinition(
            deps.db,
            workflow.projectId,
            request.candidate,
            deps.config.Definitions,
            deps.installedPlugins,
            { id: workflow.id },
          ),
        };
  const definition = candidate?.definition ?? (await checkedSnapshot(deps, workflow)).definition;
  const cases = chosenCases(definition, request.cases);
  // Any test run of the project clears its new workflows' test runs once their hour has passed.
  await workflowRepository.removeEndedDrafts(deps.db, workflow.projectId);
  return startCases(deps, workflow, definition, cases, candidate, request);
}

/** How long a draft's runs are kept after their start: long enough to read them, not for ever. */
export const DRAFT_KEPT_MILLISECONDS = 60 * 60 * 1000;

/**
 * The test cases of a definition the project does not store (a new workflow's, before it is
 * added), validated as when adding it (400 naming `body.definition`; 409 when the project has a
 * workflow of its name, whose own tests operation tests it). Its runs need a workflow row, as
 * every execution has: a draft of the project (`workflowRepository.insertDraft`), which no list
 * or lookup shows and which is removed, with its runs, by a later call once its hour has passed.
 */
export async function startCandidateTests(
  deps: StartExecutionDeps,
  projectId: string,
  request: TestRunRequest & { candidate: string },
): Promise<StartedTests> {
  const definition = await validateWorkflowDefinition(
    deps.db,
    projectId,
    request.candidate,
    deps.config.Definitions,
    deps.installedPlugins,
  );
  const stored = await workflowRepository.findByName(deps.db, definition.name, projectId);
  if (stored) {
    throw new Conflict(
      `The project has a workflow named "${definition.name}": test this definition as its candidate (POST /workflows/${stored.id}/tests).`,
      { code: 'workflow.name_taken' },
    );
  }
  const cases = chosenCases(definition, request.cases);
  await workflowRepository.removeEndedDrafts(deps.db, projectId);
  if (cases.length === 0) {
    return { runsOf: null, name: definition.name, revision: null, cases: [] };
  }
  const draft = await workflowRepository.insertDraft(deps.db, {
    projectId,
    name: definition.name,
    definition: request.candidate,
    until: new Date(Date.now() + DRAFT_KEPT_MILLISECONDS),
  });
  const candidate = { text: request.candidate, definition };
  return startCases(deps, draft, definition, cases, candidate, request);
}

/** Starts each of `cases` (chosen by `chosenCases`) as a dry run of `definition`, a run of `workflow`. */
async function startCases(
  deps: StartExecutionDeps,
  workflow: WorkflowRow,
  definition: WorkflowDefinition,
  cases: WorkflowTestCase[],
  candidate: StartOptions['candidate'],
  request: TestRunRequest,
): Promise<StartedTests> {
  const started: StartedTests['cases'] = [];
  for (const testCase of cases) {
    const index = definition.tests!.indexOf(testCase);
    const mocks = testCase.mocks ?? {};
    const execution = await startExecution(deps, workflow, {
      ...(testCase.inputs ? { inputs: testCase.inputs } : {}),
      inputsAt: ['definition', 'tests', index, 'inputs'],
      dryRun: { ...(Object.keys(mocks).length > 0 ? { mocks } : {}), testCase: testCase.name },
      ...(candidate ? { candidate } : {}),
      startedBy: request.startedBy,
    });
    started.push({ testCase, executionId: execution.executionId });
  }
  return {
    runsOf: workflow.id,
    name: definition.name,
    revision: candidate ? null : workflow.revision,
    cases: started,
  };
}

/** The cases to run, in the definition's order; 400 for a name that is no case. */
function chosenCases(
  definition: WorkflowDefinition,
  names: readonly string[] | undefined,
): WorkflowTestCase[] {
  const cases = definition.tests ?? [];
  if (names === undefined) return cases;
  const known = cases.map((testCase) => testCase.name);
  const problems = names.flatMap((name, index) =>
    known.includes(name)
      ? []
      : [
          problemAt(
            formatPath(['body', 'cases', index]),
            `names no test case of workflow "${definition.name}" (${known.length > 0 ? `its cases: ${known.join(', ')}` : 'it has none'})`,
            'validation.unknown',
          ),
        ],
  );
  if (problems.length > 0) throw new Invalid(problems);
  return cases.filter((testCase) => names.includes(testCase.name));
}

/**
 * Each case judged by its execution as it stands now (a case still going fails, its status
 * told); its duration runs to its end, or to now.
 */
export async function judgeWorkflowTests(
  deps: Pick<StartExecutionDeps, 'db'>,
  started: StartedTests,
): Promise<TestCaseResult[]> {
  const { runsOf } = started;
  if (runsOf === null) return [];
  const now = Date.now();
  return Promise.all(
    started.cases.map(async ({ testCase, executionId }) => {
      const row = await executionRepository.findById(deps.db, runsOf, executionId);
      if (!row) throw new Error(`Execution ${executionId} vanished while it was tested`);
      const failures = judgeTestCase(testCase, {
        status: row.status,
        outputs: row.outputs,
        message: row.message,
      });
      const end = row.executionEnd?.getTime() ?? now;
      return {
        name: testCase.name,
        passed: failures.length === 0,
        status: row.status,
        failures,
        executionId,
        durationMilliseconds: Math.max(0, end - row.executionStart.getTime()),
      };
    }),
  );
}
