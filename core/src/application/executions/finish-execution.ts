/**
 * The one way an execution ends, whoever ends it: its run (completed, failed, canceled), the API
 * (a cancel with no run behind it, a start Temporal refused), recovery (a run gone without
 * writing its outcome), the engine (data it cannot use), the concurrency limit (refused, or
 * canceled in line), a firing that could not run. The end is recorded once, and the call that
 * recorded it logs and counts it (`ExecutionLog`): an execution that had ended already keeps its
 * own outcome, and is neither logged nor counted again.
 */
import type { Kysely } from 'kysely';
import * as concurrencyRepository from '#store/concurrency-repository.js';
import * as executionRepository from '#store/execution-repository.js';
import type { ChangedExecution, RunWriter } from '#store/execution-repository.js';
import type { AttemptChange } from '#store/task-execution-repository.js';
import type { NewLogEntry } from '#store/log-repository.js';
import type { Database, ExecutionStatus } from '#store/tables.js';
import type { ExecutionLog } from '#platform/observability/execution-log.js';

export type FinalStatus = Extract<ExecutionStatus, 'Completed' | 'Failed' | 'Canceled'>;

/** How an execution ends, and what the end writes besides its status, message and time. */
export type Ending = { message: string; at: Date } & (
  | {
      /** Its run's own end: its tasks as the run left them; `logs` land with the change. */
      by: 'run';
      status: FinalStatus;
      logs?: NewLogEntry[];
      run?: RunWriter;
      /** The last task's outcome, written in the same statement (its entries lead `logs`). */
      alongside?: AttemptChange;
    }
  | {
      /**
       * Its run is gone or cannot go on: unfinished tasks and pending approvals Canceled, an
       * Error log entry under `logKey`.
       */
      by: 'abandonment';
      status: Exclude<FinalStatus, 'Completed'>;
      logKey?: string;
    }
  | {
      /** It never ran (refused by its concurrency limit, canceled in line): tasks Canceled. */
      by: 'waiting';
      status: Exclude<FinalStatus, 'Completed'>;
    }
  | {
      /**
       * The statement that decided the end wrote it (a concurrency refusal, an execution
       * created Failed): only logged and counted.
       */
      by: 'recorded';
      status: FinalStatus;
      ended: ChangedExecution;
    }
);

export interface FinishDeps {
  db: Kysely<Database>;
  /** Logs and counts the end; without it, the end is only recorded. */
  executionLog?: ExecutionLog;
}

/** Ends the execution as `ending` says; true when this call ended it. */
export async function finishExecution(
  deps: FinishDeps,
  executionId: string,
  ending: Ending,
): Promise<boolean> {
  const ended = await record(deps.db, executionId, ending);
  if (!ended) return false;
  const { status, message, at } = ending;
  const { workflowId, temporalWorkflowId, executionStart, projectId } = ended;
  deps.executionLog?.finished({
    executionId,
    projectId,
    workflowId,
    temporalWorkflowId,
    executionStart,
    status,
    message,
    at,
  });
  return true;
}

async function record(
  db: Kysely<Database>,
  executionId: string,
  ending: Ending,
): Promise<ChangedExecution | undefined> {
  const { status, message, at } = ending;
  switch (ending.by) {
    case 'run':
      return executionRepository.markExecutionFinished(
        db,
        executionId,
        { status, message, at },
        ending.logs,
        ending.run,
        ending.alongside,
      );
    case 'abandonment':
      return executionRepository.finishAbandonedExecution(
        db,
        executionId,
        { status: ending.status, message, at },
        ending.logKey,
      );
    case 'waiting':
      return concurrencyRepository.finishWaiting(db, executionId, {
        status: ending.status,
        message,
        at,
      });
    case 'recorded':
      return ending.ended;
  }
}
