import { createExecutionLog, type ExecutionLog } from '#platform/observability/execution-log.js';
import { namespaceOfProject } from '#platform/temporal/connection.js';
import * as projectRepository from '#store/project-repository.js';
import type { Logger } from '#platform/logging.js';
import type { Metrics } from '#platform/observability/metrics.js';
import type { WorkflowExecutionRow, WorkflowRevisionRow, WorkflowRow } from '#store/tables.js';
import { problemsOf } from '#definition/validation/problem.js';
import { Conflict } from '#definition/errors.js';
import { createExecution } from './create-execution.js';
import { assertMocksFit, type DryRunRequest } from './dry-run.js';
import { launchExecution, type LaunchDeps } from './launch-execution.js';
import type { PathSegment } from '#definition/validation/path.js';
import type { WorkflowDefinition } from '#definition/types.js';
import {
  installedLookups,
  quickTaskNames,
  validateWorkflowDefinition,
  type PluginLookup,
} from '../workflows/validate-definition.js';
import type { PreparedRun } from '#protocol/messages.js';
import { preparable, preparedRun } from './prepared-run.js';

export interface StartExecutionDeps extends LaunchDeps {
  /**
   * The API process's view of the installed plugins, which the definition is checked against
   * (as when it is added); without it, or when `db` is a transaction, each plugin the definition
   * names is a query.
   */
  installedPlugins?: PluginLookup;
}

export interface ExecutionStarted {
  workflowId: string;
  executionId: string;
  startedAt: string;
}

/** The deps of a start whose run, if it ends at once, is logged on the request's logger. */
export function withExecutionLog<D extends StartExecutionDeps & { metrics: Metrics }>(
  deps: D,
  log: Logger,
): D & { executionLog: ExecutionLog } {
  return { ...deps, executionLog: createExecutionLog(log, deps.metrics) };
}

/** What a start may carry beyond the workflow. */
export interface StartOptions {
  triggerId?: string;
  /** The values of the definition's inputs, as the request gave them (`body.inputs`). */
  inputs?: Record<string, unknown>;
  /** Where the request carries `inputs`, for messages: `body.inputs` unless given. */
  inputsAt?: readonly PathSegment[];
  /**
   * Rerun this finished execution: its definition snapshot (and revision), its inputs unless
   * others are given, and its completed tasks' outputs except from `fromTask` on (without it,
   * every completed task is reused). With `revision`, a rerun on that revision instead: every
   * task runs again (its tasks may differ from those that completed).
   */
  rerun?: { of: WorkflowExecutionRow; fromTask?: string };
  /** Run this revision of the workflow instead of its current definition (or the rerun's snapshot). */
  revision?: Pick<WorkflowRevisionRow, 'revision' | 'definition'>;
  /** The user who starts the run (approvers may exclude them from its approvals). */
  startedBy?: string;
  /** Start a dry run (`assertMocksFit` checks its mocks: 400 naming each problem). */
  dryRun?: DryRunRequest;
  /**
   * Only with `dryRun`: run this definition, validated by the caller and stored nowhere but in
   * the execution's snapshot (with no revision), instead of a revision of the workflow.
   */
  candidate?: { text: string; definition: WorkflowDefinition };
}

/**
 * Executes a workflow (docs/ARCHITECTURE.md#start): records the execution and prepares its run
 * (`recordRun`), and starts the run (`launchExecution`). The execution is Running from the start,
 * as the API promises (Pending under a concurrency limit, until its run has a slot).
 *
 * Temporal unavailable: 503, and the execution is recorded Failed with the reason rather than
 * left Running with nothing behind it. A process that dies between the two steps leaves the
 * execution to `recoverExecutions`, which starts the same run.
 */
export async function startExecution(
  deps: StartExecutionDeps,
  workflow: WorkflowRow,
  options: StartOptions = {},
): Promise<ExecutionStarted> {
  const { execution, prepared, project } = await recordRun(deps, workflow, options);
  await launchExecution(deps, execution, { prepared, project });
  return {
    workflowId: execution.workflowId,
    executionId: execution.id,
    startedAt: execution.executionStart.toISOString(),
  };
}

/**
 * The first half of a start, without the prepared run: see `recordRun`. (Tests record an
 * execution as an API that dies before it launches the run leaves it.)
 */
export async function recordExecution(
  deps: StartExecutionDeps,
  workflow: WorkflowRow,
  options: StartOptions = {},
): Promise<WorkflowExecutionRow> {
  return (await recordRun(deps, workflow, options)).execution;
}

/**
 * The first half of a start: validates the current definition (a rerun's: the original's
 * snapshot; or the revision asked for) as when it is stored (400 naming each problem), and
 * creates the execution (`createExecution`: 400 for inputs that do not fit), whose Temporal
 * workflow id derives from the execution id (so a retried start cannot make two runs); with the
 * run prepared (prepared-run.ts) when the execution is Running and its plugins' rows say which
 * are quick, and its project's name: what `launchExecution` takes. `deps.db` may be a
 * transaction, which then holds every write.
 */
export async function recordRun(
  deps: StartExecutionDeps,
  workflow: WorkflowRow,
  options: StartOptions,
): Promise<{ execution: WorkflowExecutionRow; prepared?: PreparedRun; project?: string }> {
  const { db, config } = deps;
  const { snapshot, definition, installed } = await checkedSnapshot(deps, workflow, options);
  if (options.dryRun?.mocks) {
    await assertMocksFit(
      db,
      workflow.projectId,
      definition,
      options.dryRun.mocks,
      db.isTransaction ? undefined : deps.installedPlugins,
    );
  }
  const project = await projectRepository.nameOf(db, workflow.projectId);
  const created = await createExecution(db, {
    workflow,
    temporalNamespace: project === undefined ? null : namespaceOfProject(config, project),
    snapshot,
    run: {
      definition,
      ...(options.inputs !== undefined ? { inputs: options.inputs } : {}),
      inputsAt: options.inputsAt ?? ['body', 'inputs'],
    },
    triggerId: options.triggerId ?? null,
    startedBy: options.startedBy ?? null,
    ...(options.rerun
      ? { rerun: { ...options.rerun, ...(options.revision ? { runAll: true } : {}) } }
      : {}),
    ...(options.dryRun ? { dryRun: options.dryRun } : {}),
    fairShare: config.Projects.Limits,
  });
  const { execution } = created;
  // Asked only of a run the API can prepare, from the lookups the check made.
  const quick =
    created.created && execution.status === 'Running' && preparable(definition)
      ? await quickTaskNames(definition, installed)
      : undefined;
  if (!created.created || quick === undefined) return { execution, project };
  const tasks = { ids: created.taskIds, quick, reused: created.reused };
  const statusAttribute = deps.temporal.statusAttribute ?? false;
  return {
    execution,
    prepared: preparedRun(config, execution, definition, tasks, statusAttribute),
    project,
  };
}

/**
 * The definition a start runs (a dry run's candidate, else the revision asked for, else a
 * rerun's snapshot, else the current one), validated as when it is stored: 400 naming each problem. What a start checks
 * before it writes anything, for a preview too.
 */
export async function checkedSnapshot(
  deps: StartExecutionDeps,
  workflow: WorkflowRow,
  options: Pick<StartOptions, 'rerun' | 'revision' | 'candidate' | 'dryRun'> = {},
) {
  const { db, config } = deps;
  const plugins = db.isTransaction ? undefined : deps.installedPlugins;
  const installed = installedLookups(db, workflow.projectId, plugins);
  if (options.candidate) {
    if (!options.dryRun) throw new Error('A candidate definition runs only as a dry run');
    return {
      snapshot: { definition: options.candidate.text, revision: null },
      definition: options.candidate.definition,
      installed,
    };
  }
  const of = options.rerun?.of;
  if (of?.dryRun && of.revision === null && !options.revision) {
    // Its snapshot is a candidate never stored: rerun, it would run for real.
    const what =
      of.dryRunTestCase === null
        ? 'the dry run of a candidate definition'
        : `the dry run of test case "${of.dryRunTestCase}" of a candidate definition`;
    throw new Conflict(
      `Execution "${of.id}" is ${what}, which was never stored: run the tests or the replay again instead.`,
      { code: 'execution.candidate' },
    );
  }
  const snapshot =
    options.revision ??
    (options.rerun
      ? { definition: options.rerun.of.definition, revision: options.rerun.of.revision }
      : workflow);
  const definition = await validateWorkflowDefinition(
    db,
    workflow.projectId,
    snapshot.definition,
    config.Definitions,
    // The snapshot reads through the pool: never while this start holds a transaction (a
    // webhook delivery's), which on the embedded database holds its only connection.
    plugins,
    { id: workflow.id },
    // The problems are in the stored definition, not in this request's body.
    (problems) =>
      problemsOf(
        `workflow "${workflow.name}"${options.revision ? ` revision ${options.revision.revision}` : ''} definition`,
        problems,
      ),
    installed,
  );
  return {
    snapshot: { definition: snapshot.definition, revision: snapshot.revision },
    definition,
    /** The plugins and configurations the check looked up, each once (`quickTaskNames`). */
    installed,
  };
}
