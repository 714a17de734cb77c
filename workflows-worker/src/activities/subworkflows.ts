/**
 * The activities of a subworkflow task (a task with `workflow`): `startSubworkflow` checks what
 * the child needs (the task's condition, its resolved inputs against the called workflow's
 * declared inputs, the nesting depth) and creates the child's execution row, before the
 * workflow starts the child as a Temporal child workflow; `finishSubworkflow` records the task's
 * outcome from the child's row once the child ended; `closeSubworkflow` ends a child row whose
 * run never started (the parent was canceled first). Each attempt records itself as a plugin's
 * does (run-task.ts): its failures come back as `TaskFailed`, so the task's error handling
 * decides what follows, and a retry starts a new child.
 */
import * as executionRepository from '#store/execution-repository.js';
import { derivedId } from '#store/ids.js';
import * as subworkflowRepository from '#store/subworkflow-repository.js';
import * as workflowRepository from '#store/workflow-repository.js';
import { evaluateCondition, resolveValue } from '#definition/expressions/evaluate.js';
import { parseDefinition } from '#definition/parse.js';
import { renderProblem } from '#definition/validation/problem.js';
import { Invalid } from '#definition/errors.js';
import { createExecution } from '#application/executions/create-execution.js';
import { finishExecution } from '#application/executions/finish-execution.js';
import { expressionScope, taskOf, type DefinitionCache } from './definitions.js';
import type { EngineDeps } from './deps.js';
import { permanentCause } from './permanent-failures.js';
import { attemptRecorder, type Failure } from './attempt-recorder.js';
import { childProject, runNamespace, type ChildProject } from './child-project.js';
import type { AttemptInput, AttemptResult } from './run-task.js';

/** One attempt of a subworkflow task and the execution id of the child it started. */
export interface SubworkflowAttemptInput extends AttemptInput {
  childExecutionId: string;
}

/** The child to start, or the task skipped by its condition. */
export type SubworkflowStart =
  | {
      status: 'Start';
      /**
       * Derived from the task, the attempt and the run (not random in the workflow: Temporal's
       * tracing interceptors draw from the workflow's random numbers too), so that a retry of
       * this step creates the same child.
       */
      childExecutionId: string;
      workflowId: string;
      workflowName: string;
      revision: number;
      /** Absent in histories recorded before children carried their project. */
      project?: ChildProject;
      /**
       * The child is a dry run (its parent is) and carries `TrellisDryRun` (the namespace has
       * it). Decided here so that a replay decides the same; absent in histories from before.
       */
      dryRun?: true;
    }
  | Extract<AttemptResult, { status: 'Skipped' }>;

/** A subworkflow attempt's recorder: its log entries keyed by attempt like a plugin attempt's. */
function subworkflowAttempt(deps: EngineDeps, input: AttemptInput, keyPrefix: string) {
  const { taskExecutionId: taskId, attempt } = input;
  const recorder = attemptRecorder(deps.db, input, {
    keyOf: (index) => `${taskId}:${attempt}:${keyPrefix}${index}`,
  });
  const failed = (failure: Failure) => recorder.failed(input.onFailure, failure);
  return { ...recorder, failed };
}

/** Runs `step`; an error no retry can fix fails the attempt with its cause (not retried). */
async function orFail<T>(
  step: () => Promise<T>,
  failed: (failure: Failure) => Promise<never>,
): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const cause =
      error instanceof Error && error.name === 'ExpressionError'
        ? error.message
        : permanentCause(error);
    if (cause === null) throw error;
    return failed({ message: cause, retryable: false });
  }
}

export function subworkflowActivities(deps: EngineDeps, definitions: DefinitionCache) {
  const { db, claimRun } = deps;

  /** A dry run's child carries `TrellisDryRun` where the namespace has it. */
  const dryRunAttribute = (dryRun: boolean) =>
    dryRun && deps.dryRunAttribute === true ? { dryRun: true as const } : {};

  async function startSubworkflow(input: AttemptInput): Promise<SubworkflowStart> {
    const { executionId, taskExecutionId: taskId, attempt, run } = input;
    const childExecutionId = derivedId(`subworkflow:${taskId}:${attempt}:${run ?? ''}`);
    await claimRun(executionId, run);
    const { log, record, failed, markRunning, flush } = subworkflowAttempt(deps, input, 'start:');
    const loaded = await orFail(() => definitions.get(executionId), failed);
    const task = await orFail(async () => taskOf(loaded, input.taskName), failed);
    const calledId = task.workflow;
    if (calledId === undefined) {
      return failed({ message: 'The task calls no workflow.', retryable: false });
    }
    const scope = await orFail(() => expressionScope(db, loaded, task.name), failed);
    const condition = task.executionCondition?.expression;
    if (input.evaluateCondition && condition !== undefined) {
      const holds = await orFail(async () => evaluateCondition(condition, scope), failed);
      if (!holds) {
        const message = `Skipped: the condition ${condition} is false.`;
        log('Info', message);
        await record('Skipped', message);
        return { status: 'Skipped', message };
      }
    }

    // A retry of this step after the child's row was written starts that same child.
    const existing = await executionRepository.findExecution(db, childExecutionId);
    if (existing) {
      return {
        status: 'Start',
        childExecutionId,
        workflowId: existing.workflowId,
        workflowName: existing.workflowName,
        revision: existing.revision ?? 0,
        ...(await childProject(deps, existing.projectId)),
        ...dryRunAttribute(existing.dryRun),
      };
    }

    await markRunning(new Date());
    log('Info', attempt === 1 ? 'Started.' : `Attempt ${attempt} started.`);
    const inputs = await orFail(
      async () => resolveValue(task.inputs ?? {}, scope) as Record<string, unknown>,
      failed,
    );

    const maxDepth = deps.config.Definitions.MaxSubworkflowDepth;
    const chain = await subworkflowRepository.chainOf(db, executionId, maxDepth + 1);
    const workflow = await workflowRepository.findById(db, calledId);
    // A run calls only workflows of its own project; another project's is as one that is gone.
    const caller = workflow && (await executionRepository.findExecution(db, executionId));
    if (!workflow || workflow.projectId !== caller?.projectId) {
      return failed({
        message: `Workflow ${calledId} does not exist (deleted since this definition was stored).`,
        retryable: false,
      });
    }
    if (chain.length > maxDepth) {
      const names = [...chain.map((link) => link.workflowName), workflow.name];
      return failed({
        message: `Subworkflows nest deeper than ${maxDepth} levels (Definitions.MaxSubworkflowDepth): ${names.join(' → ')}.`,
        retryable: false,
      });
    }
    const parsed = parseDefinition(workflow.definition, deps.config.Definitions);
    if (!parsed.ok) {
      return failed({
        message: `Workflow "${workflow.name}" has an invalid definition: ${parsed.problems.map(renderProblem).join('; ')}.`,
        retryable: false,
      });
    }
    const created = await orFail(async () => {
      try {
        return await createExecution(db, {
          workflow,
          snapshot: workflow,
          run: { definition: parsed.definition, inputs, inputsAt: ['inputs'] },
          id: childExecutionId,
          temporalNamespace: runNamespace(deps.config),
          parent: { executionId, taskExecutionId: taskId, taskName: task.name },
          // A dry run's child is one too: nothing under a dry run performs anything. A test
          // case's child takes no recorded output either, as the case's own tasks do.
          ...(loaded.execution.dryRun
            ? {
                dryRun:
                  loaded.execution.dryRunTestCase === null
                    ? {}
                    : { testCase: loaded.execution.dryRunTestCase },
              }
            : {}),
        });
      } catch (error) {
        if (!(error instanceof Invalid)) throw error;
        return failed({
          message: `Workflow "${workflow.name}" does not take these inputs: ${error.messages.join('; ')}.`,
          retryable: false,
        });
      }
    }, failed);
    definitions.put(created.execution, parsed.definition);
    log(
      'Info',
      `Started subworkflow "${workflow.name}" (revision ${workflow.revision}): execution ${childExecutionId}.`,
    );
    await flush();
    return {
      status: 'Start',
      childExecutionId,
      workflowId: workflow.id,
      workflowName: workflow.name,
      revision: workflow.revision,
      ...(await childProject(deps, workflow.projectId)),
      ...dryRunAttribute(loaded.execution.dryRun),
    };
  }

  /**
   * Records the task's attempt from the child's row, once the child's run has ended (canceled
   * after `timedOutAfter` milliseconds, the task's timeout, when given).
   */
  async function finishSubworkflow(
    input: SubworkflowAttemptInput & { timedOutAfter?: number },
  ): Promise<AttemptResult> {
    const { executionId, childExecutionId, run } = input;
    await claimRun(executionId, run);
    const { log, record, failed, unlog } = subworkflowAttempt(deps, input, 'finish:');
    let child = await executionRepository.findExecution(db, childExecutionId);
    if (child && executionRepository.isExecutionActive(child.status)) {
      // Its run ended without recording how (terminated from Temporal): it ran no further.
      const message = 'Failed: its Temporal run ended without recording an outcome.';
      await finishExecution(deps, childExecutionId, {
        by: 'abandonment',
        status: 'Failed',
        message,
        at: new Date(),
        logKey: 'engine:subworkflow-abandoned',
      });
      child = await executionRepository.findExecution(db, childExecutionId);
    }
    if (!child) {
      return failed({
        message: `Subworkflow execution ${childExecutionId} no longer exists.`,
        retryable: true,
      });
    }
    const name = `Subworkflow "${child.workflowName}" (execution ${child.id})`;
    if (child.status !== 'Completed' && input.timedOutAfter !== undefined) {
      return failed({
        message: `Timed out after ${input.timedOutAfter} ms: ${name} was canceled.`,
        retryable: true,
      });
    }
    if (child.status !== 'Completed') {
      const said = [
        child.message.trim(),
        // What its failed tasks said: the child's own message only names them.
        ...(await subworkflowRepository.failedTasksOf(db, child.id, 3)).map(
          (task) => `${task.name} said: ${task.message}`,
        ),
      ].filter((text) => text !== '');
      return failed({
        message: `${name} ended ${child.status}${said.length > 0 ? `: ${said.join(' ')}` : '.'}`,
        retryable: true,
      });
    }
    const seconds = child.executionEnd
      ? ` in ${child.executionEnd.getTime() - child.executionStart.getTime()} ms`
      : '';
    const message = `Completed: ${name} completed${seconds}.`;
    log('Info', message);
    await orFail(
      () => record('Completed', message, { output: child.outputs ?? {} }),
      (failure) => {
        unlog(); // not completed after all
        return failed(failure);
      },
    );
    return { status: 'Completed' };
  }

  /**
   * Ends the row of a child whose run never started (its parent was canceled first): Canceled,
   * with its tasks. A child whose run started has ended by then and keeps its own outcome.
   */
  async function closeSubworkflow(input: { childExecutionId: string }): Promise<void> {
    const child = await executionRepository.findExecution(db, input.childExecutionId);
    if (!child || !executionRepository.isExecutionActive(child.status)) return;
    await finishExecution(deps, child.id, {
      by: 'abandonment',
      status: 'Canceled',
      message: 'Canceled: its parent execution was canceled before it started.',
      at: new Date(),
      logKey: 'engine:subworkflow-closed',
    });
  }

  return { startSubworkflow, finishSubworkflow, closeSubworkflow };
}
