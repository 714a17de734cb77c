import { describe, expect, it } from 'vitest';
import { FOREACH_CHUNK_SIZE, itemChunks, itemParallelism, itemsToStart } from './foreach-plan.js';

describe('itemParallelism', () => {
  it("takes the task's parallelism, 10 when absent, never over the run's limit", () => {
    expect(itemParallelism(50, 1000)).toBe(50);
    expect(itemParallelism(undefined, 1000)).toBe(10);
    expect(itemParallelism(undefined, 4)).toBe(4);
    expect(itemParallelism(50, 8)).toBe(8);
  });
});

describe('itemChunks', () => {
  it('splits the items into chunks of at most the chunk size, in order', () => {
    expect(itemChunks(0)).toEqual([]);
    expect(itemChunks(3)).toEqual([{ from: 0, to: 3 }]);
    expect(itemChunks(10_000)).toHaveLength(10_000 / FOREACH_CHUNK_SIZE);
    expect(itemChunks(2500, 1000)).toEqual([
      { from: 0, to: 1000 },
      { from: 1000, to: 2000 },
      { from: 2000, to: 2500 },
    ]);
  });
});

describe('itemsToStart', () => {
  const state = { next: 0, to: 100, running: 0, parallelism: 5, failed: false };

  it('fills the free slots from the next item', () => {
    expect(itemsToStart(state)).toEqual([0, 1, 2, 3, 4]);
    expect(itemsToStart({ ...state, next: 5, running: 3 })).toEqual([5, 6]);
    expect(itemsToStart({ ...state, next: 9, running: 5 })).toEqual([]);
  });

  it('stops at the end of the chunk', () => {
    expect(itemsToStart({ ...state, next: 98 })).toEqual([98, 99]);
    expect(itemsToStart({ ...state, next: 100 })).toEqual([]);
  });

  it('starts nothing once an item failed for good', () => {
    expect(itemsToStart({ ...state, failed: true })).toEqual([]);
  });

  it('never keeps more than the parallelism running, whatever the order of ends', () => {
    let running = 0;
    let next = 0;
    let most = 0;
    for (let step = 0; step < 1000 && next < 100; step++) {
      const started = itemsToStart({ ...state, next, running });
      running += started.length;
      next = started.at(-1) === undefined ? next : started.at(-1)! + 1;
      most = Math.max(most, running);
      running -= (step * 7) % (running + 1);
    }
    expect(most).toBe(5);
    expect(next).toBe(100);
  });
});
