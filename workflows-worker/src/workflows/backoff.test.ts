import { describe, expect, it } from 'vitest';
import { retryDelay } from './backoff.js';

const never = () => {
  throw new Error('random must not be used');
};

describe('retryDelay', () => {
  it('Fixed waits the initial delay every time', () => {
    const policy = { backoffStrategy: 'Fixed', initialDelayMilliseconds: 200 } as const;
    expect([1, 2, 3].map((retry) => retryDelay(policy, retry, never))).toEqual([200, 200, 200]);
  });

  it('Linear grows by one step (initial × coefficient) per retry', () => {
    expect(
      [1, 2, 3].map((r) =>
        retryDelay({ backoffStrategy: 'Linear', initialDelayMilliseconds: 100 }, r, never),
      ),
    ).toEqual([100, 200, 300]);
    const policy = {
      backoffStrategy: 'Linear',
      initialDelayMilliseconds: 100,
      backoffCoefficient: 2,
    } as const;
    expect([1, 2, 3].map((r) => retryDelay(policy, r, never))).toEqual([100, 300, 500]);
  });

  it('Exponential multiplies by the coefficient (default 2)', () => {
    const policy = { backoffStrategy: 'Exponential', initialDelayMilliseconds: 100 } as const;
    expect([1, 2, 3, 4].map((r) => retryDelay(policy, r, never))).toEqual([100, 200, 400, 800]);
    const triple = { ...policy, backoffCoefficient: 3 };
    expect([1, 2, 3].map((r) => retryDelay(triple, r, never))).toEqual([100, 300, 900]);
  });

  it('caps every strategy at maxDelayMilliseconds', () => {
    const policy = {
      backoffStrategy: 'Exponential',
      initialDelayMilliseconds: 100,
      maxDelayMilliseconds: 250,
    } as const;
    expect([1, 2, 3, 10].map((r) => retryDelay(policy, r, never))).toEqual([100, 200, 250, 250]);
    expect(
      retryDelay(
        { backoffStrategy: 'Linear', initialDelayMilliseconds: 100, maxDelayMilliseconds: 150 },
        5,
        never,
      ),
    ).toBe(150);
  });

  it('Jitter draws from the upper half of the capped exponential delay', () => {
    const policy = {
      backoffStrategy: 'Jitter',
      initialDelayMilliseconds: 100,
      maxDelayMilliseconds: 300,
    } as const;
    expect(retryDelay(policy, 3, () => 0)).toBe(150);
    expect(retryDelay(policy, 3, () => 0.999999)).toBe(300);
    expect(retryDelay(policy, 1, () => 0.5)).toBe(75);
  });

  it('is deterministic for a given random sequence', () => {
    const seq = () => {
      let seed = 1;
      return () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    };
    const policy = { backoffStrategy: 'Jitter', initialDelayMilliseconds: 1000 } as const;
    const a = seq();
    const b = seq();
    const first = [1, 2, 3].map((r) => retryDelay(policy, r, a));
    expect([1, 2, 3].map((r) => retryDelay(policy, r, b))).toEqual(first);
  });

  it('defaults to a fixed one-second delay', () => {
    expect(retryDelay({}, 4, never)).toBe(1000);
  });
});
