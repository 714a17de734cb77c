import {
  judgeWorkflowTests,
  startCandidateTests,
  startWorkflowTests,
  type StartedTests,
} from '#application/workflows/workflow-tests.js';
import { withExecutionLog } from '#application/executions/start-execution.js';
import type { AppDeps, HandlerMap } from '../handler.js';
import { waitForRunsEnd } from '../executions/wait-for-end.js';
import { judgeReplay, startReplay } from '#application/workflows/replay-workflow.js';
import { findWorkflow, definitionText } from './handlers.js';
import { noteAudit } from '../audit/operations.js';
import type { Req } from '../request-context.js';

/** How long `POST /workflows/{workflowId}/tests` and `/replay` wait for their runs, in all. */
export const TEST_RUN_WAIT_SECONDS = 60;

/**
 * The started cases waited for (60 s at most) and judged: the report both tests operations
 * answer, with its messages. The audit entry names each case's run.
 */
async function testReport(deps: AppDeps, req: Req, started: StartedTests) {
  noteAudit(req, {
    targets: Object.fromEntries(
      started.cases.map(({ testCase, executionId }) => [`test case ${testCase.name}`, executionId]),
    ),
  });
  if (started.runsOf !== null) {
    await waitForRunsEnd(
      deps,
      started.runsOf,
      started.cases.map(({ executionId }) => executionId),
      TEST_RUN_WAIT_SECONDS,
    );
  }
  const cases = await judgeWorkflowTests(deps, started);
  const failed = cases.filter((result) => !result.passed).length;
  const still = cases.filter(
    (result) => result.status === 'Running' || result.status === 'Pending',
  );
  return {
    data: { name: started.name, passed: cases.length - failed, failed, cases },
    messages: [
      cases.length === 0
        ? `Workflow "${started.name}" has no test cases.`
        : `Workflow "${started.name}": ${cases.length - failed} passed, ${failed} failed.`,
      ...still.map(
        (result) =>
          `Test case "${result.name}" was still ${result.status} after ${TEST_RUN_WAIT_SECONDS} seconds (execution ${result.executionId}).`,
      ),
    ],
  };
}

/**
 * `/workflows/{workflowId}/tests`: a workflow's test cases run as dry runs, then judged;
 * `/workflows/tests`: those of a definition not stored yet; `/workflows/{workflowId}/replay`: a
 * candidate replayed on recent executions, then compared.
 */
export const workflowTestHandlers = {
  runWorkflowTests: async ({ deps, req, project, params, body, user, log }) => {
    const workflow = await findWorkflow(deps, project, params.workflowId);
    const started = await startWorkflowTests(withExecutionLog(deps, log), workflow, {
      ...(body.definition === undefined ? {} : { candidate: definitionText(body.definition) }),
      ...(body.cases === undefined ? {} : { cases: body.cases }),
      startedBy: user.name,
    });
    const { data, messages } = await testReport(deps, req, started);
    return {
      data: { workflowId: workflow.id, revision: started.revision, ...data },
      messages,
    };
  },

  runCandidateTests: async ({ deps, req, project, body, user, log }) => {
    const started = await startCandidateTests(withExecutionLog(deps, log), project.id, {
      candidate: definitionText(body.definition),
      ...(body.cases === undefined ? {} : { cases: body.cases }),
      startedBy: user.name,
    });
    const { data, messages } = await testReport(deps, req, started);
    return { data: { ...data, draftWorkflowId: started.runsOf }, messages };
  },

  replayWorkflow: async ({ deps, project, params, body, user, log }) => {
    const workflow = await findWorkflow(deps, project, params.workflowId);
    const started = await startReplay(withExecutionLog(deps, log), workflow, {
      candidate: definitionText(body.definition),
      last: body.last ?? 5,
      startedBy: user.name,
    });
    await waitForRunsEnd(
      deps,
      workflow.id,
      started.flatMap(({ replayExecutionId }) => replayExecutionId ?? []),
      TEST_RUN_WAIT_SECONDS,
    );
    const executions = await judgeReplay(deps, started);
    const diverged = executions.filter((execution) => execution.diverged).length;
    const runs = executions.length === 1 ? 'execution' : 'executions';
    return {
      data: { workflowId: workflow.id, replayed: executions.length, diverged, executions },
      messages: [
        executions.length === 0
          ? `Workflow "${workflow.name}" has no finished execution to replay.`
          : `Replayed ${executions.length} ${runs}: ${diverged} diverged.`,
      ],
    };
  },
} satisfies Partial<HandlerMap>;
