/**
 * Launch: starts the Temporal run of a recorded execution (`createExecution`), the second half of
 * every start that is not a schedule's firing (whose run exists before its execution) or a
 * subworkflow child (which its parent's run starts). Recovery launches the runs a process died
 * before launching.
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { TrellisConfig } from '#platform/config/types.js';
import { clientOf, type TemporalClient } from '#platform/temporal/connection.js';
import * as projectRepository from '#store/project-repository.js';
import type { WorkflowExecutionRow } from '#store/tables.js';
import { Unavailable } from '#definition/errors.js';
import { executionRunOptions, type ExecutionRun } from '#protocol/execution-run.js';
import { executionWorkflowType, type PreparedRun } from '#protocol/messages.js';
import { finishExecution, type FinishDeps } from './finish-execution.js';

export interface LaunchDeps extends FinishDeps {
  temporal: TemporalClient;
  config: TrellisConfig;
}

/** How long a launch waits for Temporal before the execution is recorded Failed (503). */
export const startDeadlineMs = 10_000;

/**
 * Starts the Temporal run of a recorded execution (`known.prepared`: as the API prepared it,
 * logged and counted as started here, since no activity of the run says so). Temporal
 * unavailable: the execution is recorded Failed with the reason (not left Running with nothing
 * behind it), and `Unavailable`.
 */
export async function launchExecution(
  deps: LaunchDeps,
  execution: WorkflowExecutionRow,
  /** The run as the API prepared it, and the project's name when the caller has it. */
  known: { prepared?: PreparedRun; project?: string } = {},
): Promise<void> {
  try {
    const project = known.project ?? (await projectRepository.nameOf(deps.db, execution.projectId));
    await startExecutionWorkflow(
      deps.temporal,
      deps.config,
      { ...execution, project },
      known.prepared,
    );
  } catch (error) {
    await recordNotStarted(deps, execution, error);
  }
  if (known.prepared) {
    // The run starts on its tasks: no activity of its own says that it started.
    deps.executionLog?.started({
      executionId: execution.id,
      projectId: execution.projectId,
      workflowId: execution.workflowId,
      temporalWorkflowId: execution.temporalWorkflowId,
      tasks: known.prepared.run.tasks.length,
      triggerId: execution.triggerId,
    });
  }
}

/** Temporal did not take the run: the execution ends Failed saying so, and `Unavailable`. */
async function recordNotStarted(
  deps: LaunchDeps,
  execution: WorkflowExecutionRow,
  error: unknown,
): Promise<never> {
  const message = `Temporal is unavailable; the execution could not start: ${(error as Error).message}`;
  const at = new Date();
  // The reason goes into the execution's log too: the detail has no message field to show it.
  await finishExecution(deps, execution.id, {
    by: 'run',
    status: 'Failed',
    message,
    at,
    logs: [
      {
        executionId: execution.id,
        taskExecutionId: null,
        dedupeKey: 'start-failed',
        level: 'Error',
        message,
        timeStamp: at,
      },
    ],
  });
  throw new Unavailable(message, { code: 'temporal.unavailable' });
}

/**
 * Starts the Temporal run of a recorded execution, bounded by `startDeadlineMs`. Idempotent: a
 * run with the execution's workflow id that exists already counts as started.
 */
export async function startExecutionWorkflow(
  temporal: TemporalClient,
  config: TrellisConfig,
  execution: ExecutionRun & Pick<WorkflowExecutionRow, 'temporalWorkflowId' | 'temporalNamespace'>,
  prepared?: PreparedRun,
): Promise<void> {
  const client = clientOf(temporal, execution.temporalNamespace);
  const has = {
    project: temporal.projectAttribute ?? false,
    status: temporal.statusAttribute ?? false,
    dryRun: temporal.dryRunAttribute ?? false,
  };
  try {
    // Bounded: a Temporal that does not answer is unavailable, not a hanging request.
    await client.withDeadline(Date.now() + startDeadlineMs, () =>
      client.workflow.start(executionWorkflowType, {
        workflowId: execution.temporalWorkflowId,
        taskQueue: config.Temporal.TaskQueue,
        ...executionRunOptions(execution, has, prepared),
      }),
    );
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
