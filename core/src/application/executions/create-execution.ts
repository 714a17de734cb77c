/**
 * The one way an execution is created, whatever begins it: the API's start and rerun, a webhook
 * delivery, a schedule's firing, a subworkflow task's child. The caller checks the definition as
 * its transport must (a 400, a failed task) and says who started the run; this snapshots the
 * definition into the execution with its inputs and one Pending row per task, and decides its
 * initial status, here and nowhere else.
 */
import type { Kysely } from 'kysely';
import * as executionRepository from '#store/execution-repository.js';
import * as projectRepository from '#store/project-repository.js';
import { newId } from '#store/ids.js';
import { appendLogs } from '#store/log-repository.js';
import type { Database, ExecutionStatus, WorkflowExecutionRow } from '#store/tables.js';
import * as taskExecutionRepository from '#store/task-execution-repository.js';
import type { ReusedTasks } from '#store/task-execution-repository.js';
import type { CreatedExecution } from '#store/execution-repository.js';
import { downstreamOf } from '#definition/dag.js';
import { resolveInputs } from '#definition/inputs.js';
import type { WorkflowDefinition } from '#definition/types.js';
import { Invalid } from '#definition/errors.js';
import { problemAt } from '#definition/validation/problem.js';
import { executionWorkflowId } from '#protocol/ids.js';
import {
  assertMayStart,
  projectLimits,
  type LimitDefaults,
  type Limits,
} from '../projects/fair-shares.js';
import type { PathSegment } from '#definition/validation/path.js';
import type { DryRunRequest } from './dry-run.js';

/** What runs: the snapshot's definition, and the inputs given for it. */
export interface Runnable {
  definition: WorkflowDefinition;
  /** The values of the definition's inputs as given; a rerun without them reuses the original's. */
  inputs?: Record<string, unknown>;
  /** Where the inputs were given, for messages (`body.inputs`). */
  inputsAt: readonly PathSegment[];
}

/**
 * Why the snapshot cannot run (a schedule fired a definition or trigger no longer valid): the
 * execution is recorded Failed at once, with this message.
 */
export interface CannotRun {
  cannotRun: string;
  /** The definition, when it parsed: its tasks get their rows. */
  definition?: WorkflowDefinition;
  inputs?: Record<string, unknown>;
}

export interface ExecutionToCreate {
  /** The workflow it runs: the execution belongs to its project. */
  workflow: { id: string; name: string; projectId: string };
  /** The definition text the execution runs (and keeps), and its revision. */
  snapshot: { definition: string; revision: number | null };
  run: Runnable | CannotRun;
  /** Given when the id derives from what starts it (a subworkflow attempt's child). */
  id?: string;
  /** Given when the Temporal run exists already (a schedule's firing); else from the id. */
  temporalWorkflowId?: string;
  /**
   * The Temporal namespace its run lives in, pinned here (`namespaceOfProject` for a run the
   * API starts; a schedule's and a child's: where Temporal started it). Null: `Temporal.Namespace`.
   */
  temporalNamespace?: string | null;
  triggerId?: string | null;
  /** The user who starts the run (approvers may exclude them from its approvals). */
  startedBy?: string | null;
  /** The execution and task that start this one as a subworkflow. */
  parent?: { executionId: string; taskExecutionId: string; taskName: string };
  /**
   * Rerun this finished execution: its inputs unless others are given, and its completed tasks'
   * outputs except from `fromTask` on (without it, every completed task is reused; with
   * `runAll`, none is: a rerun on another revision, whose tasks may differ).
   */
  rerun?: { of: WorkflowExecutionRow; fromTask?: string; runAll?: boolean };
  /** A dry run (docs/ARCHITECTURE.md#dry-runs), and the outputs its request gives tasks. */
  dryRun?: DryRunRequest;
  /**
   * The instance's default project limits: the run counts against its project's starts a minute
   * (`TooMany` past it, nothing written) and running at once (Pending until its run has a slot).
   * Absent for a subworkflow child, which runs within the share of the run that started it.
   */
  fairShare?: LimitDefaults;
}

/** An execution created, and the tasks a rerun took over; or one found already there. */
export type Created = CreatedExecution & { reused?: ReadonlySet<string> };

/**
 * Creates the execution (`Invalid` naming each problem with its inputs, or an unknown
 * `fromTask`; nothing is written then). Keyed by its Temporal workflow id: when a row for it
 * exists already (a retried firing), that execution is returned with `created: false`.
 * `db` may be a transaction, which then holds every write.
 */
export async function createExecution(
  db: Kysely<Database>,
  request: ExecutionToCreate,
): Promise<Created> {
  const limits = request.fairShare && (await startLimits(db, request, request.fairShare));
  if (!limits?.startsPerMinute) return create(db, request, limits);
  // Counted and written under the project's start lock, so that starts racing in several
  // processes cannot pass the limit together.
  const projectId = request.workflow.projectId;
  return inTransaction(db, async (trx) => {
    await projectRepository.lockStarts(trx, projectId);
    await assertMayStart(trx, projectId, limits);
    return create(trx, request, limits);
  });
}

function inTransaction<T>(
  db: Kysely<Database>,
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

async function create(
  db: Kysely<Database>,
  request: ExecutionToCreate,
  limits: Limits | undefined,
): Promise<Created> {
  const { run } = request;
  const inputs = 'cannotRun' in run ? run.inputs : inputsOf(run, request.rerun);
  const rerun =
    request.rerun && run.definition && (await reusedTasks(db, run.definition, request.rerun));
  const id = request.id ?? newId();
  const created = await executionRepository.createExecutionWithTasks(db, {
    id,
    projectId: request.workflow.projectId,
    workflowId: request.workflow.id,
    workflowName: request.workflow.name,
    definition: request.snapshot.definition,
    revision: request.snapshot.revision,
    taskNames: run.definition?.tasks.map((task) => task.name) ?? [],
    triggerId: request.triggerId ?? null,
    startedBy: request.startedBy ?? null,
    temporalWorkflowId: request.temporalWorkflowId ?? executionWorkflowId(id),
    temporalNamespace: request.temporalNamespace ?? null,
    ...(inputs !== undefined ? { inputs } : {}),
    ...(request.parent ? { parent: request.parent } : {}),
    ...(rerun ? { rerun } : {}),
    ...(request.dryRun ? { dryRun: request.dryRun } : {}),
    ...initialStatus(run, limits?.runningExecutions ?? 0),
  });
  if (!created.created) return created;
  if (rerun) await logReusedTasks(db, created.execution.id, created.taskIds, rerun);
  if ('cannotRun' in run) {
    // Ended before it ran: no task of it is left waiting.
    await taskExecutionRepository.cancelUnfinishedTasks(db, created.execution.id, {
      message: `Canceled: the execution ended before it ran (${run.cannotRun})`,
      at: created.execution.executionEnd ?? new Date(),
    });
  }
  return rerun ? { ...created, reused: new Set(rerun.reused.outputs.keys()) } : created;
}

/** The project's limits of a run that would start now; a run that cannot run has none. */
async function startLimits(
  db: Kysely<Database>,
  request: ExecutionToCreate,
  defaults: LimitDefaults,
): Promise<(Limits & { projectName: string }) | undefined> {
  if ('cannotRun' in request.run) return undefined;
  return projectLimits(db, request.workflow.projectId, defaults);
}

/**
 * Failed when it cannot run; Pending under a concurrency limit or its project's running-at-once
 * limit, until its run has a slot (the run's admission decides, see activities/concurrency.ts);
 * Running otherwise.
 */
function initialStatus(
  run: Runnable | CannotRun,
  projectRunningLimit: number,
): {
  status: ExecutionStatus;
  message?: string;
  executionEnd?: Date;
} {
  if ('cannotRun' in run) {
    return { status: 'Failed', message: run.cannotRun, executionEnd: new Date() };
  }
  const limited = run.definition.configuration?.concurrency || projectRunningLimit > 0;
  return { status: limited ? 'Pending' : 'Running' };
}

function inputsOf(run: Runnable, rerun: ExecutionToCreate['rerun']): Record<string, unknown> {
  if (rerun && run.inputs === undefined) return rerun.of.inputs;
  const resolved = resolveInputs(run.definition, run.inputs, run.inputsAt);
  if (!resolved.ok) throw new Invalid(resolved.problems);
  return resolved.inputs;
}

const reusedMessage = (of: string) => ({
  task: `Completed: output reused from execution ${of}; not run again.`,
  log: `Output reused from execution ${of}; not run again.`,
});

/** What a rerun takes over from the execution it reruns (`Invalid` for an unknown `fromTask`). */
async function reusedTasks(
  db: Kysely<Database>,
  definition: WorkflowDefinition,
  rerun: NonNullable<ExecutionToCreate['rerun']>,
): Promise<{ of: string; reused: ReusedTasks }> {
  const { of, fromTask, runAll } = rerun;
  if (fromTask !== undefined && !definition.tasks.some((task) => task.name === fromTask)) {
    throw new Invalid(
      problemAt('body.fromTask', `names no task of the execution's definition (${fromTask})`),
    );
  }
  const again = fromTask === undefined ? new Set<string>() : downstreamOf(definition, fromTask);
  const completed = runAll
    ? new Map<string, unknown>()
    : await taskExecutionRepository.completedOutputs(db, of.id);
  const outputs = new Map([...completed].filter(([name]) => !again.has(name)));
  return {
    of: of.id,
    reused: { outputs, message: reusedMessage(of.id).task, at: new Date() },
  };
}

/** Each reused task's log says so. */
async function logReusedTasks(
  db: Kysely<Database>,
  executionId: string,
  ids: ReadonlyMap<string, string>,
  rerun: { of: string; reused: ReusedTasks },
): Promise<void> {
  const { outputs, at } = rerun.reused;
  if (outputs.size === 0) return;
  await appendLogs(
    db,
    [...outputs.keys()].map((name) => ({
      executionId,
      taskExecutionId: ids.get(name) ?? null,
      dedupeKey: `${ids.get(name) ?? name}:reused`,
      level: 'Info' as const,
      message: reusedMessage(rerun.of).log,
      exception: null,
      timeStamp: at,
    })),
  );
}
