import { judgeWorkflowTests, startWorkflowTests } from '#application/workflows/workflow-tests.js';
import { withExecutionLog } from '#application/executions/start-execution.js';
import type { HandlerMap } from '../handler.js';
import { waitForRunEnd } from '../executions/wait-for-end.js';
import { findWorkflow, definitionText } from './handlers.js';

/** How long `POST /workflows/{workflowId}/tests` waits for its cases' runs, in all. */
export const TEST_RUN_WAIT_SECONDS = 60;

/** `/workflows/{workflowId}/tests`: a workflow's test cases run as dry runs, then judged. */
export const workflowTestHandlers = {
  runWorkflowTests: async ({ deps, project, params, body, user, log }) => {
    const workflow = await findWorkflow(deps, project, params.workflowId);
    const started = await startWorkflowTests(withExecutionLog(deps, log), workflow, {
      ...(body.definition === undefined ? {} : { candidate: definitionText(body.definition) }),
      ...(body.cases === undefined ? {} : { cases: body.cases }),
      startedBy: user.name,
    });
    // One deadline for all: the cases run at once, so the slowest one bounds the wait.
    const deadline = Date.now() + TEST_RUN_WAIT_SECONDS * 1000;
    await Promise.all(
      started.cases.map(({ executionId }) =>
        waitForRunEnd(
          deps,
          { workflowId: workflow.id, executionId },
          Math.max(0, (deadline - Date.now()) / 1000),
        ),
      ),
    );
    const cases = await judgeWorkflowTests(deps, started);
    const failed = cases.filter((result) => !result.passed).length;
    const still = cases.filter(
      (result) => result.status === 'Running' || result.status === 'Pending',
    );
    return {
      data: {
        workflowId: workflow.id,
        name: started.name,
        revision: started.revision,
        passed: cases.length - failed,
        failed,
        cases,
      },
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
  },
} satisfies Partial<HandlerMap>;
