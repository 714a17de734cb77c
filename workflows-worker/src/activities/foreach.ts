/**
 * The bookkeeping of a forEach task (README, "foreach"), as local activities of the run:
 * evaluate the items and create their rows (`startForEach`), hand a chunk's workflow its items'
 * row ids (`forEachItemIds`), and record the task's end from its items' (`finishForEach`). The
 * items' attempts are ordinary task attempts (`runTaskAttempt` with `item`).
 */
import * as itemRepository from '#store/foreach-item-repository.js';
import { evaluateWrapped, ExpressionError } from '#definition/expressions/evaluate.js';
import { itemTaskName, MAX_FOREACH_ITEMS } from '#definition/foreach.js';
import { Invalid } from '#definition/errors.js';
import { attemptRecorder } from './attempt-recorder.js';
import { childProject, type ChildProject } from './child-project.js';
import { expressionScope, taskOf, type DefinitionCache } from './definitions.js';
import type { EngineDeps } from './deps.js';
import { permanentCause } from './permanent-failures.js';

/** A forEach task of a run: its row and name. */
export interface ForEachTaskInput {
  executionId: string;
  taskExecutionId: string;
  taskName: string;
  /** How many items run at once (for the task's log). */
  parallelism: number;
  /** The run's id when an operator reset it from Temporal (reset-runs.ts). */
  run?: string;
}

/** The items are in their rows (`count` of them), or the task failed, with why. */
export type ForEachStart =
  /** `project` is absent in histories recorded before chunks carried their project. */
  { ok: true; count: number; project?: ChildProject } | { ok: false; message: string };

export interface ForEachFinish extends ForEachTaskInput {
  /** All items ended Completed or Skipped; one failed for good (`failedIndex`); canceled. */
  outcome: 'Completed' | 'Failed' | 'Canceled';
  failedIndex?: number;
  /** Failed for another reason than an item (a chunk's workflow failed): why. */
  reason?: string;
}

export type ForEachEnd = { status: 'Completed' | 'Failed' | 'Canceled'; message: string };

export function forEachActivities(deps: EngineDeps, definitions: DefinitionCache) {
  const { db, claimRun, logger } = deps;

  /**
   * The forEach task's one attempt, its log entries keyed by step (`start`, `end`) so that a
   * retry writes each once.
   */
  function taskAttempt(input: ForEachTaskInput, key: string) {
    const { executionId, taskExecutionId, run } = input;
    return attemptRecorder(
      db,
      { executionId, taskExecutionId, attempt: 1, run },
      { keyOf: () => `${taskExecutionId}:foreach:${key}` },
    );
  }

  async function fail(
    input: ForEachTaskInput,
    message: string,
    key = 'start',
    at = new Date(),
  ): Promise<ForEachStart> {
    const attempt = taskAttempt(input, key);
    attempt.log('Error', message);
    await attempt.record('Failed', message, { at });
    return { ok: false, message };
  }

  /**
   * Evaluates the task's `forEach.items` and creates one Pending row per item; the task is
   * Running from then on. Items that are not an array, too many of them, or an expression that
   * fails, fail the task with the reason.
   */
  async function startForEach(input: ForEachTaskInput): Promise<ForEachStart> {
    await claimRun(input.executionId, input.run);
    const loaded = await definitions.get(input.executionId);
    const task = taskOf(loaded, input.taskName);
    const expression = task.forEach?.items;
    if (expression === undefined) throw new Invalid(`Task '${task.name}' has no forEach`);
    let items: unknown;
    try {
      items = evaluateWrapped(expression, await expressionScope(db, loaded, task.name));
    } catch (error) {
      if (!(error instanceof ExpressionError)) throw error;
      return fail(input, `Failed: forEach.items could not be evaluated: ${error.message}`);
    }
    if (!Array.isArray(items)) {
      return fail(
        input,
        `Failed: forEach.items must yield an array, but ${expression} yields ${describe(items)}.`,
      );
    }
    if (items.length > MAX_FOREACH_ITEMS) {
      return fail(
        input,
        `Failed: forEach.items yields ${items.length} items, more than the ${MAX_FOREACH_ITEMS} a forEach task may run.`,
      );
    }
    const row = await itemRepository.findForEachTask(db, input.taskExecutionId);
    if (!row) throw new Invalid(`Task row ${input.taskExecutionId} does not exist`);
    try {
      await itemRepository.insertItems(
        db,
        row,
        items,
        (index) => itemTaskName(task.name, index),
        input.run,
      );
    } catch (error) {
      const cause = permanentCause(error);
      if (cause === null) throw error;
      return fail(input, `Failed: the items could not be stored: ${cause}`);
    }
    const started = taskAttempt(input, 'start');
    await started.markRunning(new Date());
    started.log(
      'Info',
      `Started: ${items.length} item${items.length === 1 ? '' : 's'}, at most ${input.parallelism} at once.`,
    );
    await started.flush();
    logger.debug(
      { executionId: input.executionId, task: task.name, items: items.length },
      'forEach items created',
    );
    return {
      ok: true,
      count: items.length,
      ...(await childProject(deps, loaded.execution.projectId)),
    };
  }

  /** The row ids of items `from` (included) to `to` (excluded), in order. */
  async function forEachItemIds(input: {
    taskExecutionId: string;
    from: number;
    to: number;
  }): Promise<string[]> {
    return itemRepository.itemIds(db, input.taskExecutionId, input.from, input.to);
  }

  /**
   * Records the end of a forEach task from its items: Completed with the array of the items'
   * outputs in order (null for a skipped one), or Failed naming the item that failed, the items
   * that had not finished Skipped. A canceled one's unfinished items are Canceled (the run
   * records the task itself).
   */
  async function finishForEach(input: ForEachFinish): Promise<ForEachEnd> {
    await claimRun(input.executionId, input.run);
    const at = new Date();
    if (input.outcome === 'Canceled') {
      const message = 'Canceled: the execution was canceled.';
      await itemRepository.endUnfinishedItems(db, input.taskExecutionId, {
        status: 'Canceled',
        message,
        at,
      });
      return { status: 'Canceled', message };
    }
    if (input.outcome === 'Failed' && input.reason !== undefined) {
      await itemRepository.endUnfinishedItems(db, input.taskExecutionId, {
        status: 'Skipped',
        message: 'Skipped: the task failed.',
        at,
      });
      const message = `Failed: ${input.reason}`;
      await fail(input, message, 'end');
      return { status: 'Failed', message };
    }
    if (input.outcome === 'Failed') {
      const failed = itemTaskName(input.taskName, input.failedIndex ?? 0);
      await itemRepository.endUnfinishedItems(db, input.taskExecutionId, {
        status: 'Skipped',
        message: `Skipped: item ${failed} failed.`,
        at,
      });
      const outcomes = await itemRepository.itemOutcomes(db, input.taskExecutionId);
      const cause = outcomes.find((item) => item.name === failed)?.message ?? 'Failed.';
      const message = `Failed: item ${failed} failed: ${cause}`;
      await fail(input, message, 'end', at);
      return { status: 'Failed', message };
    }
    const outcomes = await itemRepository.itemOutcomes(db, input.taskExecutionId);
    const skipped = outcomes.filter((item) => item.status !== 'Completed').length;
    const output = outcomes.map((item) => (item.status === 'Completed' ? item.output : null));
    const message = `Completed: ${outcomes.length} item${outcomes.length === 1 ? '' : 's'}${skipped > 0 ? ` (${skipped} skipped)` : ''}.`;
    try {
      const ended = taskAttempt(input, 'end');
      ended.log('Info', message);
      await ended.record('Completed', message, { output, at });
    } catch (error) {
      const cause = permanentCause(error);
      if (cause === null) throw error;
      const failed = `Failed: the items' outputs could not be stored: ${cause}`;
      await fail(input, failed, 'end');
      return { status: 'Failed', message: failed };
    }
    return { status: 'Completed', message };
  }

  return { startForEach, forEachItemIds, finishForEach };
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return `the ${typeof value} ${text.length > 100 ? `${text.slice(0, 100)}…` : text}`;
}
