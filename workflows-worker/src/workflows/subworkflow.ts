/**
 * One attempt of a subworkflow task (a task with `workflow`), under the `subworkflows` patch: an
 * activity checks the task's inputs against the called workflow and creates the child's
 * execution row, the child runs as a Temporal child workflow of this run (the same
 * type as the run, so an ordinary Trellis execution with its own tasks and logs), and an
 * activity records the task's outcome from the child's row: Completed with the child's
 * `outputs`, or failed with the child's message (the task's error handling then decides, and a
 * retry starts a new child).
 *
 * Canceling this run cancels the child (its cancel is awaited, so it has ended Canceled before
 * this run records its own end); so does the task's timeout. A child whose run never started
 * (the cancel came first) has its row closed Canceled.
 */
import {
  CancellationScope,
  ChildWorkflowCancellationType,
  executeChild,
  isCancellation,
  ParentClosePolicy,
  sleep,
} from '@temporalio/workflow';
import { startStatusAttributes } from '#protocol/execution-run.js';
import { executionWorkflowId } from '#protocol/ids.js';
import type { ExecutionInput } from '#protocol/messages.js';
import {
  TrellisDryRun,
  TrellisExecutionId,
  TrellisWorkflowId,
  TrellisWorkflowName,
} from '#protocol/search-attributes.js';
import { runDetails, runSummary } from '#protocol/user-metadata.js';
import type { AttemptInput, AttemptResult, SubworkflowAttemptInput } from '../activities/index.js';
import { bookkeeping } from './bookkeeping.js';
import { childProject } from './child-project.js';
import type { ExecutionWorkflow } from './execution-signature.js';
import type { RunVersion } from './run-version.js';

/**
 * Runs one attempt: resolves like a plugin attempt (`Completed`, `Skipped`), or throws the
 * `TaskFailed` failure the attempt recorded, or the cancellation of the run.
 */
export async function runSubworkflowAttempt(
  input: AttemptInput,
  timeoutMilliseconds: number | undefined,
  version: RunVersion,
  statusAttribute: boolean,
): Promise<AttemptResult> {
  const label = `Task ${input.taskName}: attempt ${input.attempt}`;
  // Not cancellable: once the child's row may exist, the code below sees to it.
  const start = await CancellationScope.nonCancellable(() =>
    bookkeeping(`${label}: check and record the subworkflow`).startSubworkflow(input),
  );
  if (start.status === 'Skipped') return start;
  const { childExecutionId } = start;
  const attempt: SubworkflowAttemptInput = { ...input, childExecutionId };

  const child = new CancellationScope();
  let timedOut = false;
  const timer = new CancellationScope();
  if (timeoutMilliseconds !== undefined) {
    timer
      .run(() => sleep(timeoutMilliseconds, { summary: `${label}: subworkflow timeout` }))
      .then(
        () => {
          timedOut = true;
          child.cancel();
        },
        () => {}, // canceled: the child ended first
      );
  }
  const project = childProject(start.project, version);
  try {
    await child.run(() =>
      executeChild<ExecutionWorkflow>(version.workflowType, {
        workflowId: executionWorkflowId(childExecutionId),
        args: [{ executionId: childExecutionId } satisfies ExecutionInput],
        // The child ends with its parent, Canceled, whatever ends the parent.
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
        typedSearchAttributes: [
          { key: TrellisWorkflowId, value: start.workflowId },
          { key: TrellisWorkflowName, value: start.workflowName },
          { key: TrellisExecutionId, value: childExecutionId },
          ...project.attributes,
          ...(version.startedClean ? startStatusAttributes(statusAttribute) : []),
          ...(start.dryRun === true ? [{ key: TrellisDryRun, value: true }] : []),
        ],
        staticSummary: runSummary(start.workflowName),
        staticDetails: runDetails({
          workflowId: start.workflowId,
          workflowName: start.workflowName,
          ...project.details,
          executionId: childExecutionId,
        }),
      }),
    );
  } catch (error) {
    if (isCancellation(error) && CancellationScope.current().consideredCancelled) {
      await CancellationScope.nonCancellable(() =>
        bookkeeping(`${label}: close the subworkflow`).closeSubworkflow({ childExecutionId }),
      );
      throw error;
    }
    // The child ended Failed or Canceled (or timed out): its row says how, below.
  } finally {
    timer.cancel();
  }
  return bookkeeping(`${label}: record the subworkflow's outcome`).finishSubworkflow({
    ...attempt,
    ...(timedOut && timeoutMilliseconds !== undefined
      ? { timedOutAfter: timeoutMilliseconds }
      : {}),
  });
}
