import { describe, expect, it } from 'vitest';
import { TooMany } from '#definition/errors.js';
import { createProjectRequestRate } from './request-rate.js';

const partner = { id: 'p1', name: 'partner-a' };
const other = { id: 'p2', name: 'partner-b' };

describe("a project's requests a minute", () => {
  it('lets a burst up to the limit through, then one request each 60/limit seconds', () => {
    let now = 0;
    const rate = createProjectRequestRate(() => now);
    for (let i = 0; i < 6; i++) rate.take(partner, 6);
    let refused: unknown;
    try {
      rate.take(partner, 6);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(TooMany);
    expect((refused as TooMany).retryAfterSeconds).toBe(10);
    expect((refused as TooMany).problems[0]?.code).toBe('project.requests_per_minute');
    // Another project has its own bucket.
    rate.take(other, 6);
    now += 10_000;
    rate.take(partner, 6);
    expect(() => rate.take(partner, 6)).toThrow(TooMany);
  });

  it('counts nothing for an unlimited project (0)', () => {
    const rate = createProjectRequestRate(() => 0);
    for (let i = 0; i < 1000; i++) rate.take(partner, 0);
  });
});
