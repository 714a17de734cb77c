import type { ExecutionStatus } from '#protocol/statuses.js';
import type { Logger } from '../logging.js';
import type { Metrics } from './metrics.js';

/**
 * The process log's record of runs, and the run metrics: one line when a run starts and one
 * when it ends (status, Trellis workflow id, execution id, Temporal workflow id, duration), at
 * info, a failed run at warn. Every place that starts or ends an execution reports it here, once:
 * callers report only the status change they actually made.
 */
export interface ExecutionLog {
  started(execution: {
    executionId: string;
    projectId: string;
    workflowId: string;
    temporalWorkflowId: string;
    tasks: number;
    triggerId: string | null;
  }): void;
  finished(execution: {
    executionId: string;
    projectId: string;
    workflowId: string;
    temporalWorkflowId: string;
    status: Extract<ExecutionStatus, 'Completed' | 'Failed' | 'Canceled'>;
    message: string;
    executionStart: Date;
    at: Date;
  }): void;
}

export function createExecutionLog(logger: Logger, metrics: Metrics): ExecutionLog {
  return {
    started({ executionId, projectId, workflowId, temporalWorkflowId, tasks, triggerId }) {
      metrics.executionStarted(projectId);
      logger.info(
        { executionId, workflowId, temporalWorkflowId, tasks, triggerId },
        'execution started',
      );
    },
    finished(execution) {
      const { executionId, workflowId, temporalWorkflowId, status, message } = execution;
      const durationMs = Math.max(0, execution.at.getTime() - execution.executionStart.getTime());
      metrics.executionFinished(execution.projectId, status, durationMs / 1000);
      const line = { executionId, workflowId, temporalWorkflowId, status, durationMs, message };
      if (status === 'Failed') logger.warn(line, 'execution failed');
      else logger.info(line, `execution ${status.toLowerCase()}`);
    },
  };
}
