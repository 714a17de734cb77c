import { describe, expect, it } from 'vitest';
import { requestsInLastMinute, secondsUntilRequestAllowed } from './fair-shares.js';

describe("a project's requests in the last minute", () => {
  it('weighs the previous minute by how much of it the last sixty seconds still cover', () => {
    expect(requestsInLastMinute({ previousCount: 10, count: 2, elapsed: 0.25 })).toBe(9.5);
    expect(requestsInLastMinute({ previousCount: 10, count: 2, elapsed: 0 })).toBe(12);
    expect(requestsInLastMinute({ previousCount: 0, count: 7, elapsed: 0.9 })).toBe(7);
  });

  it('lets a refused request through once the previous minute has slid far enough out', () => {
    // 10 last minute, 3 now (the refused one included) at 15 s, limit 10: 10 × 0.75 + 3 = 10.5.
    const seconds = secondsUntilRequestAllowed({ previousCount: 10, count: 3, elapsed: 0.25 }, 10);
    expect(seconds).toBeCloseTo(3);
    // Then: 10 × (1 − 0.3) + 3 = 10, allowed.
    expect(requestsInLastMinute({ previousCount: 10, count: 3, elapsed: 0.3 })).toBeCloseTo(10);
  });

  it("waits into the next minute when this minute's own requests fill the limit", () => {
    // Limit 3, the fourth request of a fresh minute at 30 s: the minute ends in 30 s, and the
    // three then weigh 3 × (1 − f) + 1 ≤ 3 from f = 1/3 (20 s) on.
    expect(secondsUntilRequestAllowed({ previousCount: 0, count: 4, elapsed: 0.5 }, 3)).toBeCloseTo(
      50,
    );
    // Limit 1: the one request must slide out entirely.
    expect(secondsUntilRequestAllowed({ previousCount: 0, count: 2, elapsed: 0.5 }, 1)).toBeCloseTo(
      90,
    );
  });
});
