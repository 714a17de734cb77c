/**
 * forEach tasks (README, "foreach"): the task runs once per item of a list, each item an entry
 * of the task list (`Task[3]`) with its own attempts, and its output is the array of the items'
 * outputs. Behind the `foreach` patch.
 *
 * The run's workflow evaluates the items (a local activity that creates the items' rows), then
 * runs them in chunks of at most 1,000, one child workflow (`trellisForEachChunk`) per chunk and
 * one chunk at a time, and records the task's end from its items'. A chunk keeps at most
 * `parallelism` items running, each through the task's error handling like any task's attempts.
 * Chunks keep every history small (foreach-plan.ts): 10,000 items in one workflow would pass
 * Temporal's 51,200 events.
 *
 * An item that fails for good (after its retries) fails the task: its chunk starts no more
 * items and cancels those running, and the items that had not finished are Skipped. An item
 * skipped (its condition, or error strategy Skip) gives null in the output. A cancel of the run
 * cancels the chunk's workflow, which cancels the running items; the unfinished ones end
 * Canceled.
 */
import {
  CancellationScope,
  condition,
  executeChild,
  isCancellation,
  ParentClosePolicy,
  ChildWorkflowCancellationType,
  sleep,
} from '@temporalio/workflow';
import type { ErrorHandling } from '#definition/types.js';
import { attemptActivities, attemptSummary, taskFailure } from './attempts.js';
import { bookkeeping } from './bookkeeping.js';
import { childProject } from './child-project.js';
import { failurePlan } from './error-handling.js';
import { itemChunks, itemParallelism, itemsToStart } from './foreach-plan.js';
import type { TaskState } from './planner.js';
import type { RunTask } from '#protocol/run-definition.js';
import type { RunVersion } from './run-version.js';

/** A forEach task of a run, and what its items need to run. */
export interface ForEachTask {
  executionId: string;
  task: RunTask;
  handling: ErrorHandling;
  /** The run's limit of tasks at once (its `degreeOfParallelism`, at most `maxParallelism`). */
  runParallelism: number;
  workflowTimeout: number | undefined;
  run: string | undefined;
  version: RunVersion;
}

/**
 * Runs a forEach task to its end: the task's state then, or null when the run was canceled
 * (the run records the task Canceled, as for any task).
 */
export async function runForEach(of: ForEachTask): Promise<TaskState | null> {
  const { executionId, task, run } = of;
  const parallelism = itemParallelism(task.forEach?.parallelism, of.runParallelism);
  const taskInput = {
    executionId,
    taskExecutionId: task.id,
    taskName: task.name,
    parallelism,
    ...(run !== undefined ? { run } : {}),
  };
  try {
    const started = await bookkeeping(`Task ${task.name}: evaluate the forEach items`).startForEach(
      taskInput,
    );
    if (!started.ok) return { status: 'Failed' };
    let failedIndex: number | undefined;
    const project = childProject(started.project, of.version);
    for (const { from, to } of itemChunks(started.count)) {
      const result = await executeChild(trellisForEachChunk, {
        workflowId: forEachChunkWorkflowId(task.id, from, run),
        args: [
          {
            executionId,
            task,
            handling: of.handling,
            parallelism,
            from,
            to,
            ...(of.workflowTimeout !== undefined ? { workflowTimeout: of.workflowTimeout } : {}),
            ...(run !== undefined ? { run } : {}),
          },
        ],
        cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
        parentClosePolicy: ParentClosePolicy.TERMINATE,
        staticSummary: `Task ${task.name}: items ${from} to ${to - 1}`,
        ...(project.attributes.length > 0 && { typedSearchAttributes: project.attributes }),
      });
      if (result.failedIndex !== undefined) {
        failedIndex = result.failedIndex;
        break;
      }
    }
    const end = await bookkeeping(`Task ${task.name}: record the forEach outcome`).finishForEach({
      ...taskInput,
      outcome: failedIndex === undefined ? 'Completed' : 'Failed',
      ...(failedIndex !== undefined ? { failedIndex } : {}),
    });
    return { status: end.status === 'Completed' ? 'Completed' : 'Failed' };
  } catch (error) {
    if (!isCancellation(error)) {
      // Not expected (a chunk's workflow failed, not an item): fail the task rather than the
      // run's workflow task.
      const reason = error instanceof Error ? error.message : String(error);
      await bookkeeping(`Task ${task.name}: record the forEach failure`).finishForEach({
        ...taskInput,
        outcome: 'Failed',
        reason: `the items could not run: ${reason}`,
      });
      return { status: 'Failed' };
    }
    await CancellationScope.nonCancellable(() =>
      bookkeeping(`Task ${task.name}: cancel the unfinished items`).finishForEach({
        ...taskInput,
        outcome: 'Canceled',
      }),
    );
    return null;
  }
}

/**
 * The workflow id of a chunk: the task row's id is unique, and a run reset from Temporal (`run`)
 * starts its own chunks beside those of the run it replaces.
 */
export function forEachChunkWorkflowId(taskExecutionId: string, from: number, run?: string) {
  return `trellis-foreach-${taskExecutionId}-${from}${run !== undefined ? `-${run}` : ''}`;
}

/** What a chunk's workflow runs: items `from` (included) to `to` (excluded) of a task. */
export interface ForEachChunkInput {
  executionId: string;
  task: RunTask;
  handling: ErrorHandling;
  parallelism: number;
  from: number;
  to: number;
  workflowTimeout?: number;
  run?: string;
}

/** The chunk ran every item, or stopped at an item that failed for good. */
export interface ForEachChunkResult {
  failedIndex?: number;
}

/**
 * The child workflow of one chunk of a forEach task's items: at most `parallelism` running at
 * once, the next one started as soon as one ends; each item's attempts follow the task's error
 * handling. Canceled (the run was), it cancels the running items and ends once they stopped.
 */
export async function trellisForEachChunk(input: ForEachChunkInput): Promise<ForEachChunkResult> {
  const { task, from, to, parallelism } = input;
  const ids = await bookkeeping(`Task ${task.name}: items ${from} to ${to - 1}`).forEachItemIds({
    taskExecutionId: task.id,
    from,
    to,
  });
  const items = new CancellationScope();
  const running = new Set<Promise<void>>();
  let next = from;
  let failedIndex: number | undefined;
  let changed = false;
  try {
    for (;;) {
      for (const index of itemsToStart({
        next,
        to,
        running: running.size,
        parallelism,
        failed: failedIndex !== undefined,
      })) {
        next = index + 1;
        const id = ids[index - from];
        if (id === undefined) continue;
        const done = items
          .run(() => runItem(input, id, index))
          .then((outcome) => {
            if (outcome === 'Failed' && failedIndex === undefined) {
              failedIndex = index;
              items.cancel();
            }
          });
        const tracked = done.finally(() => {
          running.delete(tracked);
          changed = true;
        });
        running.add(tracked);
      }
      if (running.size === 0) break;
      changed = false;
      await condition(() => changed);
    }
  } catch (error) {
    if (isCancellation(error)) {
      await CancellationScope.nonCancellable(() => Promise.allSettled([...running]));
    }
    throw error;
  }
  return failedIndex !== undefined ? { failedIndex } : {};
}

/** Runs one item's attempts until it completes, is skipped, fails for good or is canceled. */
async function runItem(
  input: ForEachChunkInput,
  taskExecutionId: string,
  index: number,
): Promise<'Completed' | 'Skipped' | 'Failed' | 'Canceled'> {
  const { task } = input;
  const name = `${task.name}[${index}]`;
  for (let attempt = 1; ; attempt++) {
    const onFailure = failurePlan(input.handling, attempt, Math.random);
    const activities = attemptActivities(
      task,
      input.workflowTimeout,
      attemptSummary(name, attempt, onFailure),
    );
    try {
      const result = await activities.runTaskAttempt({
        executionId: input.executionId,
        taskExecutionId,
        taskName: task.name,
        attempt,
        evaluateCondition: attempt === 1,
        onFailure,
        item: index,
        ...(task.timeoutMilliseconds !== undefined
          ? { timeoutMilliseconds: task.timeoutMilliseconds }
          : {}),
        ...(input.run !== undefined ? { run: input.run } : {}),
      });
      return result.status;
    } catch (error) {
      if (isCancellation(error)) return 'Canceled';
      const outcome = taskFailure(error);
      if (outcome !== 'Retrying' || onFailure.outcome !== 'Retrying') {
        return outcome === 'Skipped' ? 'Skipped' : 'Failed';
      }
    }
    try {
      await sleep(onFailure.delayMilliseconds, {
        summary: `Task ${name}: back off before attempt ${attempt + 1}`,
      });
    } catch (error) {
      if (isCancellation(error)) return 'Canceled';
      throw error;
    }
  }
}
