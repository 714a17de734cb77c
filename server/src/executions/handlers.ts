import { WorkflowNotFoundError } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import * as executionRepository from '../../../core/src/db/execution-repository.js';
import * as approvalRepository from '../../../core/src/db/approval-repository.js';
import * as logRepository from '../../../core/src/db/log-repository.js';
import * as taskExecutionRepository from '../../../core/src/db/task-execution-repository.js';
import type {
  ApprovalRow,
  WorkflowExecutionRow,
  WorkflowRow,
} from '../../../core/src/db/tables.js';
import * as workflowRepository from '../../../core/src/db/workflow-repository.js';
import { Conflict, NotFound, Unavailable } from '../../../core/src/errors.js';
import type { Logger } from '../../../core/src/logging.js';
import {
  createExecutionLog,
  type ExecutionLog,
} from '../../../core/src/observability/execution-log.js';
import { approveSignal, cancelSignal, rejectSignal } from '../../../core/src/temporal/messages.js';
import type { AppDeps } from '../handler.js';
import type { HandlerMap } from '../handler.js';
import { confirmation } from '../handler.js';
import { listReply, requestedPage } from '../lists.js';
import { assertSameId, workflowNotFound } from '../workflows/handlers.js';
import { startExecution } from './start-execution.js';
import { waitForRunEnd } from './wait-for-end.js';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

async function findWorkflow(deps: AppDeps, workflowId: string): Promise<WorkflowRow> {
  const workflow = await workflowRepository.findById(deps.db, workflowId);
  if (!workflow) throw workflowNotFound(workflowId);
  return workflow;
}

/** The execution of that workflow; 404 when unknown or another workflow's. */
async function findExecution(
  deps: AppDeps,
  params: { workflowId: string; executionId: string },
): Promise<WorkflowExecutionRow> {
  const execution = await executionRepository.findById(
    deps.db,
    params.workflowId,
    params.executionId,
  );
  if (!execution) {
    throw new NotFound(
      `Execution "${params.executionId}" was not found in workflow "${params.workflowId}".`,
      { code: 'execution.not_found' },
    );
  }
  return execution;
}

async function findTask(
  deps: AppDeps,
  params: { workflowId: string; executionId: string; taskExecutionId: string },
) {
  const execution = await findExecution(deps, params);
  const task = await taskExecutionRepository.findTask(
    deps.db,
    execution.id,
    params.taskExecutionId,
  );
  if (!task) {
    throw new NotFound(
      `Task "${params.taskExecutionId}" was not found in execution "${params.executionId}".`,
      { code: 'task.not_found' },
    );
  }
  return task;
}

function temporalClient(deps: AppDeps): Client {
  return deps.temporal.client;
}

function assertActive(execution: WorkflowExecutionRow, action: string): void {
  if (!executionRepository.isExecutionActive(execution.status)) {
    throw new Conflict(
      `Execution "${execution.id}" is ${execution.status}; only a Pending, Running or Paused execution can ${action}.`,
      { code: 'execution.not_running' },
    );
  }
}

/** Sends a signal to the execution's run; 503 when Temporal cannot be reached. */
async function signalRun(
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

/** Records an approval decision exactly once, then tells the run; undone if the run cannot hear it. */
async function decide(
  deps: AppDeps,
  params: { workflowId: string; executionId: string; approvalId: string },
  decision: 'Approved' | 'Rejected',
  decidedBy: string,
): Promise<ApprovalRow> {
  const execution = await findExecution(deps, params);
  const client = temporalClient(deps);
  if (!executionRepository.isExecutionActive(execution.status)) {
    // Say what the client most needs: unknown approval, already decided, or the run is over.
    const existing = await approvalRepository.findApproval(
      deps.db,
      execution.id,
      params.approvalId,
    );
    if (!existing) {
      throw new NotFound(
        `Approval ${params.approvalId} was not found in execution ${execution.id}.`,
        { code: 'approval.not_found' },
      );
    }
    if (existing.status !== 'Pending') throw approvalRepository.alreadyDecided(existing);
    assertActive(execution, decision === 'Approved' ? 'be approved' : 'be rejected');
  }
  const approval = await approvalRepository.decideApproval(deps.db, {
    executionId: execution.id,
    approvalId: params.approvalId,
    decision,
    decidedBy,
  });
  try {
    const sent = await signalRun(client, execution, (handle) =>
      decision === 'Approved'
        ? handle.signal(approveSignal, { approvalId: approval.id, decidedBy })
        : handle.signal(rejectSignal, { approvalId: approval.id, decidedBy }),
    );
    if (sent === 'no-run') {
      throw new Conflict(`Execution "${execution.id}" is no longer running.`, {
        code: 'execution.not_running',
      });
    }
  } catch (error) {
    await approvalRepository.undoApprovalDecision(deps.db, approval.id);
    throw error;
  }
  return approval;
}

function toLogEntry(entry: logRepository.LogEntryView) {
  return {
    id: entry.id,
    message: entry.message,
    level: entry.level,
    timeStamp: entry.timeStamp.toISOString(),
    exception: entry.exception,
  };
}

/** `/workflows/{workflowId}/executions`: runs, their tasks, logs and approvals. */
export const executionHandlers = {
  listExecutions: async ({ deps, params, query }) => {
    await findWorkflow(deps, params.workflowId);
    const paged = await executionRepository.list(deps.db, params.workflowId, {
      ...(query.status ? { status: query.status } : {}),
      ...(requestedPage(query) ? { page: requestedPage(query) } : {}),
    });
    return listReply(paged, query, (row) => ({
      id: row.id,
      status: row.status,
      executionStart: row.executionStart.toISOString(),
      executionEnd: iso(row.executionEnd),
    }));
  },

  getExecution: async ({ deps, params }) => {
    const execution = await findExecution(deps, params);
    return {
      data: {
        workflowId: execution.workflowId,
        executionId: execution.id,
        workflow: execution.definition,
        status: execution.status,
        inputs: execution.inputs,
        outputs: execution.status === 'Completed' ? (execution.outputs ?? {}) : null,
        rerunOf: execution.rerunOf,
        executionStart: execution.executionStart.toISOString(),
        executionEnd: iso(execution.executionEnd),
      },
    };
  },

  executeWorkflow: async ({ deps, params, body, query, log }) => {
    assertSameId('workflowId', body.workflowId, params.workflowId);
    const workflow = await findWorkflow(deps, params.workflowId);
    const started = await startExecution(withExecutionLog(deps, log), workflow, {
      ...(body.inputs ? { inputs: body.inputs } : {}),
    });
    const end =
      query.waitSeconds === undefined ? {} : await waitForRunEnd(deps, started, query.waitSeconds);
    return {
      data: { ...started, ...end },
      messages: [`Execution "${started.executionId}" of workflow "${workflow.name}" was started.`],
    };
  },

  rerunExecution: async ({ deps, params, body, log }) => {
    const workflow = await findWorkflow(deps, params.workflowId);
    const original = await findExecution(deps, params);
    if (executionRepository.isExecutionActive(original.status)) {
      throw new Conflict(
        `Execution "${original.id}" is ${original.status}; only a finished execution can be rerun.`,
        { code: 'execution.still_running' },
      );
    }
    const started = await startExecution(withExecutionLog(deps, log), workflow, {
      ...(body?.inputs ? { inputs: body.inputs } : {}),
      rerun: { of: original, ...(body?.fromTask !== undefined ? { fromTask: body.fromTask } : {}) },
    });
    return {
      data: started,
      messages: [
        `Execution "${started.executionId}" reruns execution "${original.id}" of workflow "${workflow.name}".`,
      ],
    };
  },

  cancelExecution: async ({ deps, params, user, log }) => {
    const execution = await findExecution(deps, params);
    const client = temporalClient(deps);
    assertActive(execution, 'be canceled');
    const sent = await signalRun(client, execution, (handle) =>
      handle.signal(cancelSignal, { requestedBy: user.name }),
    );
    if (sent === 'no-run') {
      // Nothing runs it (its start never reached Temporal): there is nothing to stop.
      const outcome = {
        status: 'Canceled' as const,
        message: `Canceled by ${user.name}.`,
        at: new Date(),
      };
      const ended = await executionRepository.markExecutionFinished(deps.db, execution.id, outcome);
      if (ended) {
        const runs = createExecutionLog(log, deps.metrics);
        runs.finished({ executionId: execution.id, ...outcome, ...ended });
      }
    }
    return confirmation(`Cancellation of execution "${execution.id}" was requested.`);
  },

  listExecutionLogs: async ({ deps, params, query }) => {
    const execution = await findExecution(deps, params);
    const paged = await logRepository.listExecutionLogs(
      deps.db,
      execution.id,
      requestedPage(query),
    );
    return listReply(paged, query, toLogEntry);
  },

  listExecutionTasks: async ({ deps, params, query }) => {
    const execution = await findExecution(deps, params);
    const paged = await taskExecutionRepository.listTasks(
      deps.db,
      execution.id,
      requestedPage(query),
    );
    return listReply(paged, query, (task) => ({
      id: task.id,
      name: task.name,
      workflowId: task.workflowId,
      workflowExecutionId: task.executionId,
      status: task.status,
      message: task.message,
      startTime: iso(task.startTime),
      endTime: iso(task.endTime),
    }));
  },

  getExecutionTask: async ({ deps, params }) => {
    const task = await findTask(deps, params);
    return {
      data: {
        id: task.id,
        status: task.status,
        message: task.message,
        output: task.status === 'Completed' ? (task.output ?? null) : null,
        startTime: iso(task.startTime),
        endTime: iso(task.endTime),
      },
    };
  },

  listTaskLogs: async ({ deps, params, query }) => {
    const task = await findTask(deps, params);
    const paged = await logRepository.listTaskLogs(deps.db, task.id, requestedPage(query));
    return listReply(paged, query, toLogEntry);
  },

  listApprovals: async ({ deps, params, query }) => {
    const execution = await findExecution(deps, params);
    const paged = await approvalRepository.listApprovals(
      deps.db,
      execution.id,
      requestedPage(query),
    );
    return listReply(paged, query, (approval) => ({
      id: approval.id,
      taskName: approval.taskName,
      comment: approval.comment,
      status: approval.status,
      requestedAt: approval.requestedAt.toISOString(),
      decidedAt: iso(approval.decidedAt),
      decidedBy: approval.decidedBy,
    }));
  },

  approveApproval: async ({ deps, params, user }) => {
    const approval = await decide(deps, params, 'Approved', user.name);
    return confirmation(`Approval "${approval.id}" of task "${approval.taskName}" was approved.`);
  },

  rejectApproval: async ({ deps, params, user }) => {
    const approval = await decide(deps, params, 'Rejected', user.name);
    return confirmation(`Approval "${approval.id}" of task "${approval.taskName}" was rejected.`);
  },
} satisfies Partial<HandlerMap>;

/** The deps of a start whose run, if it ends at once, is logged on the request's logger. */
function withExecutionLog(deps: AppDeps, log: Logger): AppDeps & { executionLog: ExecutionLog } {
  return { ...deps, executionLog: createExecutionLog(log, deps.metrics) };
}
