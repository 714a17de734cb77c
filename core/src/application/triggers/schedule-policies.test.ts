import { describe, expect, it } from 'vitest';
import {
  checkSchedulePolicies as checkSchedulePoliciesProblems,
  formatDuration,
  parseDuration,
} from './schedule-policies.js';
import { renderProblem } from '#definition/validation/problem.js';

/** What a user reads of each problem. */
const checkSchedulePolicies = (...args: Parameters<typeof checkSchedulePoliciesProblems>) => {
  const result = checkSchedulePoliciesProblems(...args);
  return result.ok ? result : { ...result, problems: result.problems.map(renderProblem) };
};

describe('parseDuration', () => {
  it('reads whole numbers with a unit, largest first', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('2d')).toBe(172_800_000);
    expect(parseDuration('1d2h3m4s')).toBe(93_784_000);
    expect(parseDuration('0s')).toBe(0);
  });

  it('refuses anything else', () => {
    for (const text of ['', '5', 'm', '1.5h', '30m1h', '5 m', '-5m', 'PT5M', '5min', '1w']) {
      expect(parseDuration(text), text).toBeNull();
    }
  });

  it('writes back what it reads', () => {
    for (const text of ['90s', '5m', '1h30m', '2d', '1d2h3m4s', '0s']) {
      expect(formatDuration(parseDuration(text)!)).toBe(text === '90s' ? '1m30s' : text);
    }
  });
});

describe('checkSchedulePolicies', () => {
  it('defaults to Skip, a one-minute catch-up window and no jitter', () => {
    expect(checkSchedulePolicies({ cron: '* * * * *' })).toEqual({
      ok: true,
      policies: { overlap: 'Skip', catchupWindowMs: 60_000, jitterMs: 0 },
    });
  });

  it('reads the keys case-insensitively', () => {
    expect(
      checkSchedulePolicies({ Overlap: 'BufferAll', CATCHUPWINDOW: '1h', jitter: '30s' }),
    ).toEqual({
      ok: true,
      policies: { overlap: 'BufferAll', catchupWindowMs: 3_600_000, jitterMs: 30_000 },
    });
  });

  it('names every problem once', () => {
    expect(checkSchedulePolicies({ overlap: 'skip', catchupWindow: '5s', jitter: 30 })).toEqual({
      ok: false,
      problems: [
        'properties.overlap: must be one of "Skip", "BufferOne", "BufferAll", "CancelOther", "TerminateOther", "AllowAll"',
        'properties.catchupWindow: must be from 10s to 366d, got "5s"',
        'properties.jitter: must be a duration such as "30s", "5m", "1h30m" or "2d", got 30',
      ],
    });
    expect(checkSchedulePolicies({ jitter: '400d' })).toMatchObject({
      ok: false,
      problems: ['properties.jitter: must be from 0s to 366d, got "400d"'],
    });
  });
});
