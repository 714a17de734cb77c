/**
 * What reaches a run that is still going: the check that it is, and signals sent to it. Cancels
 * and decisions of old runs go through here.
 */
import { WorkflowNotFoundError } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import * as executionRepository from '#store/execution-repository.js';
import type { WorkflowExecutionRow } from '#store/tables.js';
import { Conflict, Unavailable } from '#definition/errors.js';

/** 409 unless the execution is Pending, Running or Paused; `action` says what was refused. */
export function assertActive(execution: WorkflowExecutionRow, action: string): void {
  if (!executionRepository.isExecutionActive(execution.status)) {
    throw new Conflict(
      `Execution "${execution.id}" is ${execution.status}; only a Pending, Running or Paused execution can ${action}.`,
      { code: 'execution.not_running' },
    );
  }
}

/** 409 while the execution is Pending, Running or Paused: only a finished one can be rerun. */
export function assertFinished(execution: WorkflowExecutionRow): void {
  if (executionRepository.isExecutionActive(execution.status)) {
    throw new Conflict(
      `Execution "${execution.id}" is ${execution.status}; only a finished execution can be rerun.`,
      { code: 'execution.still_running' },
    );
  }
}

/** Sends a signal to the execution's run; 503 when Temporal cannot be reached. */
export async function signalRun(
  client: Client,
  execution: WorkflowExecutionRow,
  send: (handle: ReturnType<Client['workflow']['getHandle']>) => Promise<void>,
): Promise<'sent' | 'no-run'> {
  try {
    await client.withDeadline(Date.now() + 10_000, () =>
      send(client.workflow.getHandle(execution.temporalWorkflowId)),
    );
    return 'sent';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'no-run';
    throw new Unavailable(`Temporal is unavailable: ${(error as Error).message}`, {
      code: 'temporal.unavailable',
    });
  }
}
