/**
 * A candidate definition replayed before it is published: each of the workflow's latest finished
 * real executions is re-run as a dry run of the candidate, with its inputs and, as mocks, the
 * outputs its tasks recorded (for each task of the same name and type); then each replay is
 * compared with the execution it replays (`replayDivergences`). The caller waits in between.
 */
import * as executionRepository from '#store/execution-repository.js';
import * as taskExecutionRepository from '#store/task-execution-repository.js';
import type { ExecutionStatus, WorkflowExecutionRow, WorkflowRow } from '#store/tables.js';
import { Invalid } from '#definition/errors.js';
import { parseDefinition } from '#definition/parse.js';
import { replayDivergences, type Divergence } from '#definition/replay-divergences.js';
import type { WorkflowDefinition } from '#definition/types.js';
import { renderProblem } from '#definition/validation/problem.js';
import { startExecution, type StartExecutionDeps } from '../executions/start-execution.js';
import { validateWorkflowDefinition } from './validate-definition.js';

export interface ReplayRequest {
  /** The candidate's text (`body.definition`). */
  candidate: string;
  /** How many of the latest finished real executions. */
  last: number;
  /** Who replays: each replay's run is started by them. */
  startedBy: string;
}

/** An execution and its replay: the dry run's id, or why the candidate refused to run it. */
export interface StartedReplay {
  original: WorkflowExecutionRow;
  replayExecutionId: string | null;
  refused?: string;
}

export interface ReplayedExecution {
  executionId: string;
  revision: number | null;
  status: ExecutionStatus;
  replayExecutionId: string | null;
  replayStatus: ExecutionStatus | null;
  diverged: boolean;
  divergences: Divergence[];
}

/**
 * Validates the candidate as an update would be (400 naming `body.definition`) and starts one
 * dry run of it per execution replayed. An execution whose inputs (or recorded outputs) the
 * candidate refuses is not run: that is its divergence.
 */
export async function startReplay(
  deps: StartExecutionDeps,
  workflow: WorkflowRow,
  request: ReplayRequest,
): Promise<StartedReplay[]> {
  const definition = await validateWorkflowDefinition(
    deps.db,
    workflow.projectId,
    request.candidate,
    deps.config.Definitions,
    deps.installedPlugins,
    { id: workflow.id },
  );
  const candidate = { text: request.candidate, definition };
  const originals = await executionRepository.latestFinishedRealExecutions(
    deps.db,
    workflow.id,
    request.last,
  );
  const started: StartedReplay[] = [];
  for (const original of originals) {
    const mocks = await recordedMocks(deps, definition, original);
    try {
      const replay = await startExecution(deps, workflow, {
        inputs: original.inputs,
        inputsAt: ['execution', original.id, 'inputs'],
        dryRun: Object.keys(mocks).length > 0 ? { mocks } : {},
        candidate,
        startedBy: request.startedBy,
      });
      started.push({ original, replayExecutionId: replay.executionId });
    } catch (error) {
      if (!(error instanceof Invalid)) throw error;
      started.push({
        original,
        replayExecutionId: null,
        refused: error.problems.map(renderProblem).join('; '),
      });
    }
  }
  return started;
}

/**
 * The outputs the execution's tasks recorded, by name, for the candidate's tasks of the same name
 * and type (a task whose plugin changed gets an output generated from its new plugin's schema).
 */
async function recordedMocks(
  deps: StartExecutionDeps,
  candidate: WorkflowDefinition,
  original: WorkflowExecutionRow,
): Promise<Record<string, unknown>> {
  const parsed = parseDefinition(original.definition, deps.config.Definitions);
  if (!parsed.ok) return {};
  const typeThen = new Map(
    parsed.definition.tasks.map((task) => [task.name, JSON.stringify(task.type)]),
  );
  const outcomes = await taskExecutionRepository.taskOutcomes(deps.db, original.id);
  const mocks: Record<string, unknown> = {};
  for (const task of candidate.tasks) {
    if (task.type === undefined || typeThen.get(task.name) !== JSON.stringify(task.type)) continue;
    const outcome = outcomes.find((each) => each.name === task.name);
    if (outcome?.status === 'Completed') mocks[task.name] = outcome.output;
  }
  return mocks;
}

/** Each execution compared with its replay as the replay stands now. */
export async function judgeReplay(
  deps: Pick<StartExecutionDeps, 'db'>,
  started: readonly StartedReplay[],
): Promise<ReplayedExecution[]> {
  const results: ReplayedExecution[] = [];
  for (const { original, replayExecutionId, refused } of started) {
    const base = {
      executionId: original.id,
      revision: original.revision,
      status: original.status,
      replayExecutionId,
    };
    if (replayExecutionId === null) {
      results.push({
        ...base,
        replayStatus: null,
        diverged: true,
        divergences: [
          {
            kind: 'inputs',
            task: null,
            path: 'inputs',
            then: original.inputs,
            now: null,
            message: `the candidate refuses this execution: ${refused ?? ''}`,
          },
        ],
      });
      continue;
    }
    const replay = await executionRepository.findExecution(deps.db, replayExecutionId);
    if (!replay) throw new Error(`Execution ${replayExecutionId} vanished while it was replayed`);
    const divergences = replayDivergences(
      {
        ...original,
        tasks: await taskExecutionRepository.taskOutcomes(deps.db, original.id),
      },
      { ...replay, tasks: await taskExecutionRepository.taskOutcomes(deps.db, replay.id) },
    );
    results.push({
      ...base,
      replayStatus: replay.status,
      diverged: divergences.length > 0,
      divergences,
    });
  }
  return results;
}
