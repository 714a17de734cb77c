/**
 * How a forEach task's items are run (README, "foreach"), decided without I/O: how many at once,
 * and which items each chunk's child workflow runs. Pure.
 *
 * Why chunks: one item costs its workflow about 6 history events (an activity's scheduled,
 * started and completed, and most of a workflow task), so 10,000 items in the run's own workflow
 * would pass Temporal's limit of 51,200 events. Each chunk of at most `FOREACH_CHUNK_SIZE` items
 * runs in a child workflow with a history of its own (about 6,000 events), and the run's
 * workflow gains only about 6 events a chunk.
 */
import { DEFAULT_FOREACH_PARALLELISM } from '#definition/foreach.js';

/** The most items one chunk's child workflow runs. */
export const FOREACH_CHUNK_SIZE = 1000;

/**
 * How many items run at once: the task's `forEach.parallelism` (10 when absent), never more than
 * the run's own limit (its `degreeOfParallelism`, itself at most `maxParallelism`).
 */
export function itemParallelism(requested: number | undefined, runLimit: number): number {
  return Math.max(1, Math.min(requested ?? DEFAULT_FOREACH_PARALLELISM, runLimit));
}

/** The chunks of `count` items, in order: `[from, to)` each, at most `size` items. */
export function itemChunks(
  count: number,
  size = FOREACH_CHUNK_SIZE,
): Array<{ from: number; to: number }> {
  const chunks: Array<{ from: number; to: number }> = [];
  for (let from = 0; from < count; from += size) {
    chunks.push({ from, to: Math.min(count, from + size) });
  }
  return chunks;
}

/**
 * The next items a chunk starts: as many as free slots allow, from `next`, none once an item
 * failed for good.
 */
export function itemsToStart(state: {
  next: number;
  to: number;
  running: number;
  parallelism: number;
  failed: boolean;
}): number[] {
  if (state.failed) return [];
  const free = Math.max(0, state.parallelism - state.running);
  const end = Math.min(state.to, state.next + free);
  const indexes: number[] = [];
  for (let index = state.next; index < end; index++) indexes.push(index);
  return indexes;
}
