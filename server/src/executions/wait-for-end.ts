import * as executionRepository from '../../../core/src/db/execution-repository.js';
import type { ExecutionStatus } from '../../../core/src/db/tables.js';
import { executionWorkflowId } from '../../../core/src/temporal/ids.js';
import type { AppDeps } from '../handler.js';

/** Where a run stands after a wait: its status, and its outputs when it completed. */
export interface RunEnd {
  status: ExecutionStatus;
  outputs?: Record<string, unknown>;
}

/**
 * Waits up to `seconds` for an execution's run to end (Temporal tells when, without polling)
 * and then reads where it stands from the database, which the run writes before it ends. A run
 * that ends badly, or a Temporal that cannot be asked, only shortens the wait: the row says what
 * happened.
 */
export async function waitForRunEnd(
  deps: AppDeps,
  execution: { workflowId: string; executionId: string },
  seconds: number,
): Promise<RunEnd> {
  if (seconds > 0) {
    const client = deps.temporal.client;
    const deadline = AbortSignal.timeout(seconds * 1000);
    try {
      await client.withAbortSignal(deadline, () =>
        client.workflow.getHandle(executionWorkflowId(execution.executionId)).result(),
      );
    } catch {
      // Timed out, failed, canceled or unreachable: the row below is the answer in every case.
    }
  }
  const row = await executionRepository.findById(
    deps.db,
    execution.workflowId,
    execution.executionId,
  );
  if (!row) throw new Error(`Execution ${execution.executionId} vanished while it was awaited`);
  return row.status === 'Completed'
    ? { status: row.status, outputs: row.outputs ?? {} }
    : { status: row.status };
}
