/**
 * Bulk actions on a selection of a project's executions (the explorer's): rerun each failed one,
 * on the revision it ran or its workflow's latest, and cancel each one still going. Every
 * execution goes through the single use case (`startExecution`, `cancelExecution`), so a bulk
 * action does nothing a run-by-run caller could not; a preview checks what the action would and
 * changes nothing.
 */
import * as projectExecutionRepository from '#store/project-execution-repository.js';
import type { ProjectExecutionFilter } from '#store/project-execution-repository.js';
import type { WorkflowExecutionRow, WorkflowRow } from '#store/tables.js';
import * as workflowRepository from '#store/workflow-repository.js';
import { resolveInputs } from '#definition/inputs.js';
import { Invalid, TooMany, TrellisError, type Problem } from '#definition/errors.js';
import { renderProblem } from '#definition/validation/problem.js';
import type { Logger } from '#platform/logging.js';
import { assertActive, assertFinished } from './active-run.js';
import { cancelExecution, type CancelDeps } from './cancel-execution.js';
import {
  checkedSnapshot,
  startExecution,
  type StartExecutionDeps,
  type StartOptions,
} from './start-execution.js';

/** The most executions one bulk action takes (by ids, or matched by a filter). */
export const maxBulkExecutions = 500;

/** Which executions: named by id, or those the explorer's filters match. */
export type ExecutionSelection = { ids: readonly string[] } | { filter: ProjectExecutionFilter };

/** What became of one selected execution. */
export type BulkOutcome = 'WouldAct' | 'Done' | 'Skipped' | 'NotDone';

export interface BulkResult {
  executionId: string;
  /** The execution as the action found it; absent when the project has none by that id. */
  execution?: WorkflowExecutionRow;
  outcome: BulkOutcome;
  /** Why it was skipped or not done. */
  reason: Problem | null;
}

export interface RerunResult extends BulkResult {
  /** The revision the rerun runs (or would); null when skipped or not done. */
  rerunRevision: number | null;
  newExecutionId: string | null;
}

export interface BulkAction<R extends BulkResult> {
  results: R[];
  /** The project limit that stopped the action: the results after it are `NotDone`. */
  stoppedBy?: TooMany;
}

/**
 * The selected executions in the selection's order (ids: as given, each once; a filter: newest
 * first), each with its row when the project has it. A filter matching more than
 * {@link maxBulkExecutions} is `Invalid` (`selection.too_large`), before anything is done.
 */
export async function selectExecutions(
  db: StartExecutionDeps['db'],
  projectId: string,
  selection: ExecutionSelection,
): Promise<{ executionId: string; execution?: WorkflowExecutionRow }[]> {
  let ids: string[];
  if ('ids' in selection) {
    ids = [...new Set(selection.ids.map((id) => id.toLowerCase()))];
  } else {
    const matched = await projectExecutionRepository.listProjectExecutions(
      db,
      projectId,
      selection.filter,
      { limit: maxBulkExecutions + 1 },
    );
    if (matched.length > maxBulkExecutions) {
      throw new Invalid({
        code: 'selection.too_large',
        path: 'body.filter',
        message: `matches more than ${maxBulkExecutions} executions, the most one bulk action takes: narrow it (a shorter time range, a workflow, a status) or name the executions by \`ids\``,
      });
    }
    ids = matched.map((item) => item.id);
  }
  const rows = await projectExecutionRepository.findProjectExecutions(db, projectId, ids);
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((executionId) => {
    const execution = byId.get(executionId);
    return execution ? { executionId, execution } : { executionId };
  });
}

const notFound = (executionId: string): Problem => ({
  code: 'execution.not_found',
  message: `Execution "${executionId}" was not found.`,
});

/** A domain error as one reason: its first problem's code, every problem's message. */
function reasonOf(error: TrellisError): Problem {
  const { problems } = error;
  return { code: problems[0]?.code ?? error.code, message: problems.map(renderProblem).join('; ') };
}

/** Each project's workflow read once however many of its executions are selected. */
function workflowsOf(deps: { db: StartExecutionDeps['db'] }, projectId: string) {
  const found = new Map<string, Promise<WorkflowRow | undefined>>();
  return (workflowId: string) => {
    let workflow = found.get(workflowId);
    if (!workflow) {
      workflow = workflowRepository
        .findById(deps.db, workflowId)
        .then((row) => (row?.projectId === projectId ? row : undefined));
      found.set(workflowId, workflow);
    }
    return workflow;
  };
}

export interface BulkRerunOptions {
  /** `ran`: the snapshot each execution ran; `latest`: its workflow's current revision. */
  revision: 'ran' | 'latest';
  preview: boolean;
  /** The user who reruns them. */
  startedBy: string;
}

/**
 * Reruns each selected execution that failed, as the single rerun does, or (preview) checks
 * that it would: its definition still valid, and on the latest revision its inputs fitting it.
 * Stops at the project's starts a minute: that execution and the rest are `NotDone`.
 */
export async function rerunExecutions(
  deps: StartExecutionDeps,
  projectId: string,
  selection: ExecutionSelection,
  options: BulkRerunOptions,
): Promise<BulkAction<RerunResult>> {
  const selected = await selectExecutions(deps.db, projectId, selection);
  const workflowOf = workflowsOf(deps, projectId);
  const results: RerunResult[] = [];
  let stoppedBy: TooMany | undefined;
  for (const { executionId, execution } of selected) {
    const result = (outcome: BulkOutcome, reason: Problem | null = null): RerunResult => ({
      executionId,
      ...(execution ? { execution } : {}),
      outcome,
      reason,
      rerunRevision: null,
      newExecutionId: null,
    });
    if (stoppedBy) {
      results.push(result('NotDone', stoppedBy.problems[0] ?? null));
      continue;
    }
    const workflow = execution && (await workflowOf(execution.workflowId));
    if (!execution || !workflow) {
      results.push(result('Skipped', notFound(executionId)));
      continue;
    }
    const refusal = rerunRefusal(execution);
    if (refusal) {
      results.push(result('Skipped', refusal));
      continue;
    }
    const start = rerunStart(execution, workflow, options);
    const rerunRevision = start.revision?.revision ?? execution.revision;
    try {
      if (options.preview) {
        await checkRerun(deps, workflow, start);
        results.push({ ...result('WouldAct'), rerunRevision });
      } else {
        const started = await startExecution(deps, workflow, start);
        results.push({ ...result('Done'), rerunRevision, newExecutionId: started.executionId });
      }
    } catch (error) {
      if (error instanceof TooMany) {
        stoppedBy = error;
        results.push(result('NotDone', error.problems[0] ?? null));
      } else if (error instanceof TrellisError) {
        results.push(result('Skipped', reasonOf(error)));
      } else {
        throw error;
      }
    }
  }
  return { results, ...(stoppedBy ? { stoppedBy } : {}) };
}

/** Why a bulk rerun leaves this execution alone (still going, or not failed); null when it reruns it. */
function rerunRefusal(execution: WorkflowExecutionRow): Problem | null {
  try {
    assertFinished(execution);
  } catch (error) {
    if (error instanceof TrellisError) return reasonOf(error);
    throw error;
  }
  if (execution.status === 'Failed') return null;
  return {
    code: 'execution.not_failed',
    message: `Execution "${execution.id}" is ${execution.status}; a bulk rerun reruns failed executions only.`,
  };
}

/**
 * The single rerun's options for one execution: its own snapshot, or the workflow's current
 * revision when that is another (with the execution's inputs, checked against it).
 */
function rerunStart(
  execution: WorkflowExecutionRow,
  workflow: WorkflowRow,
  options: BulkRerunOptions,
): StartOptions {
  const base: StartOptions = { rerun: { of: execution }, startedBy: options.startedBy };
  if (options.revision === 'ran' || workflow.revision === execution.revision) return base;
  return {
    ...base,
    revision: { revision: workflow.revision, definition: workflow.definition },
    inputs: execution.inputs,
    inputsAt: ['execution', 'inputs'],
  };
}

/** What a rerun checks before it writes anything: its definition, and inputs given anew. */
async function checkRerun(
  deps: StartExecutionDeps,
  workflow: WorkflowRow,
  start: StartOptions,
): Promise<void> {
  const { definition } = await checkedSnapshot(deps, workflow, start);
  if (start.inputs === undefined) return;
  const resolved = resolveInputs(definition, start.inputs, start.inputsAt ?? []);
  if (!resolved.ok) throw new Invalid(resolved.problems);
}

/**
 * Cancels each selected execution still going, as the single cancel does (as `requestedBy`), or
 * (preview) says which it would.
 */
export async function cancelExecutions(
  deps: CancelDeps & { db: StartExecutionDeps['db'] },
  projectId: string,
  selection: ExecutionSelection,
  options: { preview: boolean; requestedBy: string; log: Logger },
): Promise<BulkAction<BulkResult>> {
  const selected = await selectExecutions(deps.db, projectId, selection);
  const results: BulkResult[] = [];
  for (const { executionId, execution } of selected) {
    const result = (outcome: BulkOutcome, reason: Problem | null = null): BulkResult => ({
      executionId,
      ...(execution ? { execution } : {}),
      outcome,
      reason,
    });
    if (!execution) {
      results.push(result('Skipped', notFound(executionId)));
      continue;
    }
    try {
      if (options.preview) {
        assertActive(execution, 'be canceled');
        results.push(result('WouldAct'));
      } else {
        await cancelExecution(deps, execution, options.requestedBy, options.log);
        results.push(result('Done'));
      }
    } catch (error) {
      if (!(error instanceof TrellisError)) throw error;
      results.push(result('Skipped', reasonOf(error)));
    }
  }
  return { results };
}
