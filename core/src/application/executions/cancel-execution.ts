/**
 * Cancel: a user asks an execution to stop. The run hears who asked (the cancel signal) and ends
 * Canceled; an execution whose start never reached Temporal has no run, and ends here.
 */
import { WorkflowNotFoundError } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { clientOf, type TemporalClient } from '#platform/temporal/connection.js';
import type { WorkflowExecutionRow } from '#store/tables.js';
import type { Logger } from '#platform/logging.js';
import { cancelSignal } from '#protocol/messages.js';
import { assertActive, signalRun } from './active-run.js';
import { finishExecution, type FinishDeps } from './finish-execution.js';

export interface CancelDeps extends FinishDeps {
  temporal: TemporalClient;
}

/** Asks the execution's run to stop, as `requestedBy`; 409 when it is over, 503 without Temporal. */
export async function cancelExecution(
  deps: CancelDeps,
  execution: WorkflowExecutionRow,
  requestedBy: string,
  log: Logger,
): Promise<void> {
  const client = clientOf(deps.temporal, execution.temporalNamespace);
  assertActive(execution, 'be canceled');
  const sent = await signalRun(client, execution, (handle) =>
    handle.signal(cancelSignal, { requestedBy }),
  );
  if (sent === 'sent') await requestTemporalCancel(client, execution, log);
  if (sent === 'no-run') {
    // Nothing runs it (its start never reached Temporal): there is nothing to stop.
    await finishExecution(deps, execution.id, {
      by: 'run',
      status: 'Canceled',
      message: `Canceled by ${requestedBy}.`,
      at: new Date(),
    });
  }
}

/**
 * After the cancel signal (which says who asked), asks Temporal itself to cancel the run: only a
 * workflow Temporal was asked to cancel can close as Canceled there, as it ends in Trellis. A
 * refusal changes nothing in Trellis (the signal stops the run), so it is logged, not answered.
 */
async function requestTemporalCancel(
  client: Client,
  execution: WorkflowExecutionRow,
  log: Logger,
): Promise<void> {
  try {
    await client.withDeadline(Date.now() + 10_000, () =>
      client.workflow.getHandle(execution.temporalWorkflowId).cancel(),
    );
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return; // it ended meanwhile
    log.warn(
      { err: error, executionId: execution.id },
      'Temporal did not take the cancel request; the run ends Canceled in Trellis all the same',
    );
  }
}
