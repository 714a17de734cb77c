import * as executionRepository from '#store/execution-repository.js';
import type { ExecutionStatus, WorkflowExecutionRow } from '#store/tables.js';
import type { AppDeps } from '../handler.js';

/** Where a run stands after a wait: its status, and its outputs when it completed. */
export interface RunEnd {
  status: ExecutionStatus;
  outputs?: Record<string, unknown>;
}

/**
 * Waits up to `seconds` for an execution to finish, reading its row again whenever PostgreSQL
 * says the execution changed (the same notifications that wake event streams, so a run finished
 * by any worker answers at once), or every poll interval should a notification be lost. The row
 * is the answer: the run writes its outcome there before it ends.
 */
export async function waitForRunEnd(
  deps: AppDeps,
  execution: { workflowId: string; executionId: string },
  seconds: number,
): Promise<RunEnd> {
  const deadline = Date.now() + seconds * 1000;
  const follower = deps.executionEvents.follow(execution.executionId);
  try {
    for (;;) {
      const row = await executionRepository.findById(
        deps.db,
        execution.workflowId,
        execution.executionId,
      );
      if (!row) throw new Error(`Execution ${execution.executionId} vanished while it was awaited`);
      const left = deadline - Date.now();
      if (!executionRepository.isExecutionActive(row.status) || left <= 0) return runEnd(row);
      const pollMs = deps.config.Server.Events.PollIntervalMilliseconds;
      // The first wait returns at once; false once the API is closing.
      if (!(await follower.wait(Math.min(left, pollMs)))) return runEnd(row);
    }
  } finally {
    follower.stop();
  }
}

function runEnd(row: WorkflowExecutionRow): RunEnd {
  return row.status === 'Completed'
    ? { status: row.status, outputs: row.outputs ?? {} }
    : { status: row.status };
}

/**
 * Waits for several runs of a workflow at once, up to `seconds` in all (they run side by side,
 * so the slowest bounds the wait); the rows then say where each stands.
 */
export async function waitForRunsEnd(
  deps: AppDeps,
  workflowId: string,
  executionIds: readonly string[],
  seconds: number,
): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    executionIds.map((executionId) =>
      waitForRunEnd(deps, { workflowId, executionId }, Math.max(0, (deadline - Date.now()) / 1000)),
    ),
  );
}
