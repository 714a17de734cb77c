import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { TrellisConfig } from '../../../core/src/config/types.js';
import * as executionRepository from '../../../core/src/db/execution-repository.js';
import { newId } from '../../../core/src/db/ids.js';
import type { Database, WorkflowRow } from '../../../core/src/db/tables.js';
import { ApiError, unavailable } from '../../../core/src/errors.js';
import { executionWorkflowId } from '../../../core/src/temporal/ids.js';
import {
  TrellisExecutionId,
  TrellisWorkflowId,
  TrellisWorkflowName,
} from '../../../core/src/temporal/search-attributes.js';
import {
  executionWorkflowType,
  type ExecutionInput,
} from '../../../workflows-worker/src/workflows/messages.js';
import { validateWorkflowDefinition } from '../workflows/definition.js';

export interface StartExecutionDeps {
  db: Kysely<Database>;
  temporal: { client: Client } | null;
  config: TrellisConfig;
}

export interface ExecutionStarted {
  workflowId: string;
  executionId: string;
  startedAt: string;
}

/**
 * Executes a workflow (DESIGN.md §7, "Start"): validates the current definition (400 naming
 * each problem), snapshots it into a new execution with one Pending row per task, and starts the
 * Temporal workflow whose id derives from the execution id (so a retried start cannot make two
 * runs). The execution is Running from the start, as the API promises.
 *
 * Temporal unavailable: 503, and the execution is recorded Failed with the reason rather than
 * left Running with nothing behind it.
 */
export async function startExecution(
  deps: StartExecutionDeps,
  workflow: WorkflowRow,
  options: { triggerId?: string } = {},
): Promise<ExecutionStarted> {
  const { db, temporal, config } = deps;
  let definition;
  try {
    definition = await validateWorkflowDefinition(db, workflow.definition);
  } catch (error) {
    // The messages point into the stored definition, not into this request's body.
    if (error instanceof ApiError && error.status === 400) {
      throw new ApiError(
        400,
        error.messages.map((message) =>
          message.replace(/^body\.definition: /, `workflow "${workflow.name}" definition: `),
        ),
      );
    }
    throw error;
  }
  if (!temporal) throw unavailable('Temporal is not configured; executions cannot run.');

  const executionId = newId();
  const temporalWorkflowId = executionWorkflowId(executionId);
  const startedAt = new Date();
  await executionRepository.createExecutionWithTasks(db, {
    id: executionId,
    workflowId: workflow.id,
    workflowName: workflow.name,
    definition: workflow.definition,
    taskNames: definition.tasks.map((task) => task.name),
    triggerId: options.triggerId ?? null,
    temporalWorkflowId,
    status: 'Running',
    executionStart: startedAt,
  });

  const input: ExecutionInput = { executionId };
  try {
    // Bounded: a Temporal that does not answer is unavailable, not a hanging request.
    await temporal.client.withDeadline(Date.now() + 10_000, () =>
      temporal.client.workflow.start(executionWorkflowType, {
        workflowId: temporalWorkflowId,
        taskQueue: config.Temporal.TaskQueue,
        args: [input],
        typedSearchAttributes: [
          { key: TrellisWorkflowId, value: workflow.id },
          { key: TrellisWorkflowName, value: workflow.name },
          { key: TrellisExecutionId, value: executionId },
        ],
      }),
    );
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) {
      const message = `Temporal is unavailable; the execution could not start: ${(error as Error).message}`;
      await executionRepository.markExecutionFinished(db, executionId, {
        status: 'Failed',
        message,
      });
      throw unavailable(message);
    }
  }
  return { workflowId: workflow.id, executionId, startedAt: startedAt.toISOString() };
}
