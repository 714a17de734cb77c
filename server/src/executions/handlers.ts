import type { Client } from '@temporalio/client';
import * as executionRepository from '#store/execution-repository.js';
import * as logRepository from '#store/log-repository.js';
import * as taskExecutionRepository from '#store/task-execution-repository.js';
import * as subworkflowRepository from '#store/subworkflow-repository.js';
import type { TaskDryRunPlan, WorkflowExecutionRow, WorkflowRow } from '#store/tables.js';
import * as workflowRepository from '#store/workflow-repository.js';
import { Invalid, NotFound } from '#definition/errors.js';
import { problemAt } from '#definition/validation/problem.js';
import { cancelExecution } from '#application/executions/cancel-execution.js';
import { assertFinished } from '#application/executions/active-run.js';
import type { AppDeps } from '../handler.js';
import type { HandlerMap } from '../handler.js';
import { confirmation } from '../handler.js';
import { cursorListReply, listReply, requestedPage, requestedSlice } from '../lists.js';
import { assertSameId, findWorkflow } from '../workflows/handlers.js';
import type { RequestProject } from '../projects/request-project.js';
import { streamExecutionEvents } from './event-stream.js';
import { startExecution, withExecutionLog } from '#application/executions/start-execution.js';
import { waitForRunEnd } from './wait-for-end.js';
import { noteAudit } from '../audit/operations.js';

export const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** A dry run task's plan as the API shows it: every field, null where the task did not get. */
function dryRunPlanOf(plan: TaskDryRunPlan | null) {
  if (plan === null) return null;
  return {
    source: plan.source ?? null,
    recordedFrom: plan.recordedFrom ?? null,
    plugin: plan.plugin ?? null,
    effects: plan.effects ?? null,
    parameters: plan.parameters ?? null,
    approval: plan.approval ?? null,
  };
}

/** The revision `body.revision` asks to run; 400 for a number the workflow never had. */
async function findRevisionToRun(deps: AppDeps, workflow: WorkflowRow, revision: number) {
  const found = await workflowRepository.findRevision(deps.db, workflow.id, revision);
  if (!found) {
    throw new Invalid(
      problemAt(
        'body.revision',
        `workflow "${workflow.name}" has no revision ${revision} (its revisions are 1 to ${workflow.revision}).`,
      ),
    );
  }
  return found;
}

/**
 * The execution of that workflow in the request's project; 404 when unknown, another workflow's
 * or another project's.
 */
export async function findExecution(
  deps: AppDeps,
  project: RequestProject,
  params: { workflowId: string; executionId: string },
): Promise<WorkflowExecutionRow> {
  const execution = await executionRepository.findById(
    deps.db,
    params.workflowId,
    params.executionId,
  );
  if (!execution || execution.projectId !== project.id) {
    throw new NotFound(
      `Execution "${params.executionId}" was not found in workflow "${params.workflowId}".`,
      { code: 'execution.not_found' },
    );
  }
  return execution;
}

async function findTask(
  deps: AppDeps,
  project: RequestProject,
  params: { workflowId: string; executionId: string; taskExecutionId: string },
) {
  const execution = await findExecution(deps, project, params);
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

export function temporalClient(deps: AppDeps): Client {
  return deps.temporal.client;
}

/** A task's attempts as the API shows them: the interrupted runs count as attempts of their own. */
function attemptsOf(task: { attempts: number; interruptedAttempts: number }) {
  return {
    attempts: task.attempts + task.interruptedAttempts,
    interruptedAttempts: task.interruptedAttempts,
  };
}

function toLogEntry(entry: logRepository.LogEntryView) {
  return {
    id: entry.id,
    taskExecutionId: entry.taskExecutionId,
    message: entry.message,
    level: entry.level,
    timeStamp: entry.timeStamp.toISOString(),
    exception: entry.exception,
  };
}

/** `/workflows/{workflowId}/executions`: runs, their tasks and logs (approvals: ../approvals/). */
export const executionHandlers = {
  listExecutions: async ({ deps, project, params, query }) => {
    await findWorkflow(deps, project, params.workflowId);
    const paged = await executionRepository.list(deps.db, params.workflowId, {
      ...(query.status ? { status: query.status } : {}),
      slice: requestedSlice(query),
    });
    return cursorListReply(paged, query, (row) => ({
      id: row.id,
      status: row.status,
      executionStart: row.executionStart.toISOString(),
      executionEnd: iso(row.executionEnd),
      dryRun: row.dryRun,
    }));
  },

  getExecution: async ({ deps, project, params }) => {
    const execution = await findExecution(deps, project, params);
    const parent = execution.parentExecutionId;
    const parentWorkflowId = parent
      ? await subworkflowRepository.workflowIdOf(deps.db, parent)
      : null;
    return {
      data: {
        workflowId: execution.workflowId,
        executionId: execution.id,
        workflow: execution.definition,
        status: execution.status,
        message: execution.message,
        inputs: execution.inputs,
        outputs: execution.status === 'Completed' ? (execution.outputs ?? {}) : null,
        rerunOf: execution.rerunOf,
        revision: execution.revision,
        parentExecutionId: parent,
        parentWorkflowId: parentWorkflowId ?? null,
        parentTaskName: execution.parentTaskName,
        dryRun: execution.dryRun,
        executionStart: execution.executionStart.toISOString(),
        executionEnd: iso(execution.executionEnd),
      },
    };
  },

  executeWorkflow: async ({ deps, project, params, body, query, log, user, req }) => {
    // Whatever its outcome, a dry run's start is never recorded as a real one.
    if (body.dryRun === true) noteAudit(req, { operation: 'execution.dryRun' });
    assertSameId('workflowId', body.workflowId, params.workflowId);
    // An empty object is no mock (generated clients send one for an unset map).
    const mocks = body.mocks && Object.keys(body.mocks).length > 0 ? body.mocks : undefined;
    if (mocks !== undefined && body.dryRun !== true) {
      throw new Invalid(
        problemAt('body.mocks', 'is only for a dry run: give "dryRun": true with it.'),
      );
    }
    const workflow = await findWorkflow(deps, project, params.workflowId);
    const revision =
      body.revision === undefined
        ? undefined
        : await findRevisionToRun(deps, workflow, body.revision);
    const started = await startExecution(withExecutionLog(deps, log), workflow, {
      ...(body.inputs ? { inputs: body.inputs } : {}),
      ...(revision ? { revision } : {}),
      ...(body.dryRun === true ? { dryRun: mocks ? { mocks } : {} } : {}),
      startedBy: user.name,
    });
    const end =
      query.waitSeconds === undefined ? {} : await waitForRunEnd(deps, started, query.waitSeconds);
    const what = body.dryRun === true ? 'Dry run' : 'Execution';
    return {
      data: { ...started, ...end },
      messages: [`${what} "${started.executionId}" of workflow "${workflow.name}" was started.`],
    };
  },

  rerunExecution: async ({ deps, project, params, body, log, user }) => {
    const workflow = await findWorkflow(deps, project, params.workflowId);
    const original = await findExecution(deps, project, params);
    assertFinished(original);
    const started = await startExecution(withExecutionLog(deps, log), workflow, {
      ...(body?.inputs ? { inputs: body.inputs } : {}),
      rerun: { of: original, ...(body?.fromTask !== undefined ? { fromTask: body.fromTask } : {}) },
      startedBy: user.name,
    });
    return {
      data: started,
      messages: [
        `Execution "${started.executionId}" reruns execution "${original.id}" of workflow "${workflow.name}".`,
      ],
    };
  },

  cancelExecution: async ({ deps, project, params, user, log }) => {
    const execution = await findExecution(deps, project, params);
    await cancelExecution(withExecutionLog(deps, log), execution, user.name, log);
    return confirmation(`Cancellation of execution "${execution.id}" was requested.`);
  },

  listExecutionLogs: async ({ deps, project, params, query }) => {
    const execution = await findExecution(deps, project, params);
    const paged = await logRepository.listExecutionLogs(
      deps.db,
      execution.id,
      requestedSlice(query),
      {
        includeTasks: query.includeTasks === true,
        maxBytes: deps.config.ExecutionLogs.MaxPageBytes,
      },
    );
    return { ...cursorListReply(paged, query, toLogEntry), itemByItem: true };
  },

  streamExecutionEvents: async ({ deps, project, params, query, req, user, log }) => {
    const execution = await findExecution(deps, project, params);
    // Validated against the contract: digits only. The header (what EventSource sends when it
    // reconnects) wins over the query parameter (what it was first opened with).
    const header = req.headers['last-event-id'];
    const after = typeof header === 'string' ? Number(header) : (query.lastEventId ?? 0);
    const { HeartbeatMilliseconds, PollIntervalMilliseconds } = deps.config.Server.Events;
    return {
      stream: async (res) => {
        // Taken before the stream starts (a refusal is still an envelope); a stream's client
        // that goes away frees it at once, before the stream has wound down.
        const free = deps.eventStreams.take(user.name);
        res.once('close', free);
        const closed = deps.metrics.trackEventStream();
        try {
          await streamExecutionEvents(res, {
            db: deps.db,
            hub: deps.executionEvents,
            executionId: execution.id,
            dryRun: execution.dryRun,
            after,
            heartbeatMs: HeartbeatMilliseconds,
            pollIntervalMs: PollIntervalMilliseconds,
            log,
          });
        } finally {
          closed();
          free();
        }
      },
    };
  },

  listExecutionTasks: async ({ deps, project, params, query }) => {
    const execution = await findExecution(deps, project, params);
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
      dryRun: dryRunPlanOf(task.dryRun),
      ...attemptsOf(task),
    }));
  },

  getExecutionTask: async ({ deps, project, params }) => {
    const task = await findTask(deps, project, params);
    const child = await subworkflowRepository.latestChildOf(deps.db, task.id);
    return {
      data: {
        id: task.id,
        status: task.status,
        message: task.message,
        output: task.status === 'Completed' ? (task.output ?? null) : null,
        childExecutionId: child?.id ?? null,
        childWorkflowId: child?.workflowId ?? null,
        startTime: iso(task.startTime),
        endTime: iso(task.endTime),
        dryRun: dryRunPlanOf(task.dryRun),
        ...attemptsOf(task),
      },
    };
  },

  listTaskLogs: async ({ deps, project, params, query }) => {
    const task = await findTask(deps, project, params);
    const paged = await logRepository.listTaskLogs(deps.db, task, requestedSlice(query), {
      maxBytes: deps.config.ExecutionLogs.MaxPageBytes,
    });
    return { ...cursorListReply(paged, query, toLogEntry), itemByItem: true };
  },
} satisfies Partial<HandlerMap>;
