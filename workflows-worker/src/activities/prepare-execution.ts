import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import * as executionRepository from '#store/execution-repository.js';
import * as taskExecutionRepository from '#store/task-execution-repository.js';
import type { TaskRoster } from '#store/task-execution-repository.js';
import * as triggerRepository from '#store/trigger-repository.js';
import * as workflowRepository from '#store/workflow-repository.js';
import type { WorkflowExecutionRow } from '#store/tables.js';
import { TooMany } from '#definition/errors.js';
import { parseDefinition } from '#definition/parse.js';
import { renderProblem } from '#definition/validation/problem.js';
import {
  createExecution,
  type ExecutionToCreate,
} from '#application/executions/create-execution.js';
import { finishExecution } from '#application/executions/finish-execution.js';
import type { ExecutionInput } from '#protocol/messages.js';
import { triggerInputs } from '#application/triggers/schedules.js';
import type { RunDefinition } from '#protocol/run-definition.js';
import { executionStartedMessage, runDefinitionOf } from '#application/executions/prepared-run.js';
import { admitExecution, type SlotKey, type Waiting } from './concurrency.js';
import type { DefinitionCache } from './definitions.js';
import type { EngineDeps } from './deps.js';
import { permanentCause } from './permanent-failures.js';
import { runKey } from './reset-runs.js';
import { runNamespace } from './child-project.js';
import { quickTasks } from './task-plugin.js';

/** What the workflow prepares with: its own input, and its run id when an operator reset it. */
export type PrepareInput = ExecutionInput & { run?: string };

export type PrepareResult = (
  | {
      ok: true;
      run: RunDefinition;
      /** The concurrency slot the run holds (absent without a limit). */
      slot?: SlotKey;
    }
  /** Nothing to run: the execution already finished, or a scheduled fire found it invalid. */
  | {
      ok: false;
      executionId: string;
      message: string;
      /** The execution's status (absent in histories from before it was said: Failed). */
      status?: 'Completed' | 'Failed' | 'Canceled';
      /** Not yet: the execution waits Pending for a concurrency slot (concurrency.ts). */
      queued?: Waiting;
    }
) & {
  /**
   * The namespace has the `TrellisStatus` search attribute, so the run keeps it current.
   * Decided here, in the activity's result, so that a replay decides the same. Absent in
   * histories recorded before it existed.
   */
  statusAttribute?: true;
};

/**
 * The first step of every run: find (or, for a schedule's fire, create) the execution, mark it
 * Running, log the start, and hand the workflow the graph it schedules, with which tasks have a
 * quick plugin (recorded here, in the activity's result, so that a replay decides the same).
 * An execution that can never run (its snapshot is no longer a valid definition, the database
 * refuses its data) ends Failed with the reason instead of failing this step on every retry.
 */
export function prepareExecutionActivity(deps: EngineDeps, definitions: DefinitionCache) {
  const { db, runner, executionLog, claimRun } = deps;
  const statusAttribute = deps.statusAttribute ? { statusAttribute: true as const } : {};

  async function executionOfSchedule(input: {
    workflowId: string;
    triggerId: string;
  }): Promise<WorkflowExecutionRow> {
    const temporalWorkflowId = Context.current().info.workflowExecution?.workflowId;
    if (!temporalWorkflowId) throw new Error('prepareExecution runs only inside a workflow');
    const existing = await executionRepository.findByTemporalWorkflowId(db, temporalWorkflowId);
    if (existing) return existing;
    const workflow = await workflowRepository.findById(db, input.workflowId);
    if (!workflow) {
      throw ApplicationFailure.nonRetryable(
        `Workflow ${input.workflowId} no longer exists; trigger ${input.triggerId} fired for nothing.`,
        'WorkflowMissing',
      );
    }
    const parsed = parseDefinition(workflow.definition, deps.config.Definitions);
    const trigger = await triggerRepository.findById(db, workflow.id, input.triggerId);
    // The trigger's inputs were valid when it was saved; the definition may have changed since.
    const inputs = parsed.ok
      ? triggerInputs(trigger?.properties ?? {}, parsed.definition, ['properties'])
      : undefined;
    const run: ExecutionToCreate['run'] = !parsed.ok
      ? { cannotRun: `The definition is invalid: ${parsed.problems.map(renderProblem).join('; ')}` }
      : inputs?.ok
        ? {
            definition: parsed.definition,
            inputs: inputs.inputs,
            inputsAt: ['properties', 'inputs'],
          }
        : {
            cannotRun: `The trigger's inputs do not fit the definition: ${inputs?.problems.map(renderProblem).join('; ')}`,
            definition: parsed.definition,
          };
    const toCreate: ExecutionToCreate = {
      workflow,
      snapshot: workflow,
      run,
      triggerId: input.triggerId,
      // Who set the trigger up as it is (or asked for this backfill) started the run.
      startedBy: trigger?.changedBy ?? null,
      temporalWorkflowId,
      temporalNamespace: runNamespace(deps.config),
    };
    const { execution, created } = await createExecution(db, {
      ...toCreate,
      fairShare: deps.config.Projects.Limits,
    }).catch((error: unknown) => {
      // Past the project's starts a minute: the firing is recorded, Failed with the reason.
      if (!(error instanceof TooMany)) throw error;
      return createExecution(db, {
        ...toCreate,
        run: { ...run, cannotRun: `Not started: ${error.message}` },
      });
    });
    if (created && parsed.ok) definitions.put(execution, parsed.definition);
    if (created && execution.status === 'Failed') {
      await finishExecution(deps, execution.id, {
        by: 'recorded',
        status: 'Failed',
        message: execution.message,
        at: execution.executionEnd ?? execution.executionStart,
        ended: execution,
      });
    }
    return execution;
  }

  /** The execution and, when the same query could read it, its task roster. */
  async function findOrCreate(
    input: PrepareInput,
  ): Promise<{ execution: WorkflowExecutionRow; roster?: TaskRoster }> {
    const found =
      'executionId' in input
        ? await executionRepository.findExecutionForRun(db, input.executionId)
        : { execution: await executionOfSchedule(input.scheduled) };
    if (!found) {
      throw ApplicationFailure.nonRetryable(
        `Execution ${'executionId' in input ? input.executionId : '?'} does not exist.`,
        'ExecutionMissing',
      );
    }
    if (input.run === undefined) return found;
    // Reset to its start: the run takes the execution over and runs every task again.
    await claimRun(found.execution.id, input.run, { fromStart: true });
    return (
      (await executionRepository.findExecutionForRun(db, found.execution.id)) ?? {
        execution: found.execution,
      }
    );
  }

  return async function prepareExecution(input: PrepareInput): Promise<PrepareResult> {
    const { execution, roster } = await findOrCreate(input);
    if (!executionRepository.isExecutionActive(execution.status)) {
      return {
        ok: false,
        executionId: execution.id,
        message: execution.message || `Execution is ${execution.status}.`,
        status: execution.status as 'Completed' | 'Failed' | 'Canceled',
        ...statusAttribute,
      };
    }
    try {
      const admission = await admitExecution(deps, definitions, execution);
      if (!admission.ok) return { ...admission, ...statusAttribute };
      const slot = admission.slot ? { slot: admission.slot } : {};
      const run = await prepare(execution, input.run, roster);
      return { ok: true, run, ...slot, ...statusAttribute };
    } catch (error) {
      const cause = permanentCause(error);
      if (cause === null) throw error;
      const message = `The execution cannot run: ${cause}`;
      await finishExecution(deps, execution.id, {
        by: 'abandonment',
        status: 'Failed',
        message,
        at: new Date(),
        logKey: 'engine:cannot-run',
      });
      return {
        ok: false,
        executionId: execution.id,
        message,
        status: 'Failed',
        ...statusAttribute,
      };
    }
  };

  async function prepare(
    execution: WorkflowExecutionRow,
    run: string | undefined,
    known: TaskRoster | undefined,
  ): Promise<RunDefinition> {
    const loaded = await definitions.of(execution);
    const [roster, quick] = await Promise.all([
      // A rerun's reused tasks are Completed before the run starts; no other task can be.
      known ?? taskExecutionRepository.taskRoster(db, execution.id),
      quickTasks(db, runner, execution.projectId, loaded.definition.tasks),
    ]);
    await executionRepository.markExecutionRunning(
      db,
      execution.id,
      [
        {
          executionId: execution.id,
          taskExecutionId: null,
          dedupeKey: runKey(run, executionRepository.executionPreparedLogKey),
          level: 'Info',
          message: executionStartedMessage(loaded.definition.tasks.length, execution.triggerId),
          timeStamp: new Date(),
        },
      ],
      run,
    );
    // A retry of this step (its first try failed after the write) is the same start.
    if (Context.current().info.attempt === 1) {
      executionLog.started({
        executionId: execution.id,
        projectId: execution.projectId,
        workflowId: execution.workflowId,
        temporalWorkflowId: execution.temporalWorkflowId,
        tasks: loaded.definition.tasks.length,
        triggerId: execution.triggerId,
      });
    }
    return runDefinitionOf(deps.config, execution.id, loaded.definition, {
      ids: roster.ids,
      quick,
      reused: roster.completed,
    });
  }
}
