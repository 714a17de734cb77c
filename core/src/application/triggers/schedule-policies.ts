/**
 * The policies of a TimeBased trigger's schedule, from its `properties` (keys read
 * case-insensitively): `overlap`, `catchupWindow` and `jitter`, checked and turned into what
 * Temporal Schedules take. Pure: no I/O.
 */
import { formatPath, type PathSegment } from '#definition/validation/path.js';
import { problemAt, type Problem } from '#definition/validation/problem.js';

/** What a firing does while a run the schedule started earlier still runs. */
export const overlapPolicies = [
  'Skip',
  'BufferOne',
  'BufferAll',
  'CancelOther',
  'TerminateOther',
  'AllowAll',
] as const;
export type OverlapPolicy = (typeof overlapPolicies)[number];

/** Temporal's name of each overlap policy (`ScheduleOverlapPolicy`). */
export const temporalOverlapPolicy = {
  Skip: 'SKIP',
  BufferOne: 'BUFFER_ONE',
  BufferAll: 'BUFFER_ALL',
  CancelOther: 'CANCEL_OTHER',
  TerminateOther: 'TERMINATE_OTHER',
  AllowAll: 'ALLOW_ALL',
} as const satisfies Record<OverlapPolicy, string>;

export interface SchedulePolicies {
  overlap: OverlapPolicy;
  /** How late a firing missed while Temporal could not act may still run, in milliseconds. */
  catchupWindowMs: number;
  /** The most a firing is delayed at random, in milliseconds (0: not at all). */
  jitterMs: number;
}

export const defaultSchedulePolicies: SchedulePolicies = {
  overlap: 'Skip',
  catchupWindowMs: 60_000,
  jitterMs: 0,
};

const SECOND = 1000;
const units = { d: 86_400 * SECOND, h: 3600 * SECOND, m: 60 * SECOND, s: SECOND } as const;
/** Temporal refuses a shorter catch-up window. */
const minCatchupWindowMs = 10 * SECOND;
const maxDurationMs = 366 * units.d;
const DURATION = /^(?:(\d{1,6})d)?(?:(\d{1,6})h)?(?:(\d{1,6})m)?(?:(\d{1,8})s)?$/;

/**
 * Milliseconds of a duration written as whole numbers with a unit, largest first (`90s`, `5m`,
 * `1h30m`, `2d`), or null when it is not one.
 */
export function parseDuration(text: string): number | null {
  const match = DURATION.exec(text);
  if (!match || text === '') return null;
  const [, d, h, m, s] = match;
  return (
    Number(d ?? 0) * units.d +
    Number(h ?? 0) * units.h +
    Number(m ?? 0) * units.m +
    Number(s ?? 0) * units.s
  );
}

/** A duration in the form `parseDuration` reads, largest units first (`0s` for none). */
export function formatDuration(ms: number): string {
  let rest = Math.round(ms / SECOND) * SECOND;
  let text = '';
  for (const [unit, size] of Object.entries(units)) {
    const count = Math.floor(rest / size);
    if (count > 0) text += `${count}${unit}`;
    rest -= count * size;
  }
  return text || '0s';
}

/** A property's value by its key, read case-insensitively. */
export function propertyValue(properties: Record<string, unknown>, key: string): unknown {
  const wanted = key.toLowerCase();
  return Object.entries(properties).find(([name]) => name.toLowerCase() === wanted)?.[1];
}

type Checked<T> = { ok: true; value: T } | { ok: false; problem: Problem };

function checkDuration(
  properties: Record<string, unknown>,
  key: 'catchupWindow' | 'jitter',
  fallback: number,
  min: number,
  at: readonly PathSegment[],
): Checked<number> {
  const where = formatPath([...at, key]);
  const value = propertyValue(properties, key);
  if (value === undefined) return { ok: true, value: fallback };
  const ms = typeof value === 'string' ? parseDuration(value) : null;
  const form = 'a duration such as "30s", "5m", "1h30m" or "2d"';
  if (ms === null) {
    return {
      ok: false,
      problem: problemAt(where, `must be ${form}, got ${JSON.stringify(value)}`),
    };
  }
  if (ms < min || ms > maxDurationMs) {
    return {
      ok: false,
      problem: problemAt(
        where,
        `must be from ${formatDuration(min)} to ${formatDuration(maxDurationMs)}, got ${JSON.stringify(value)}`,
      ),
    };
  }
  return { ok: true, value: ms };
}

/**
 * The schedule policies `properties` give, or one problem each; `at` is where the properties
 * are (`body.properties` in a request).
 */
export function checkSchedulePolicies(
  properties: Record<string, unknown>,
  at: readonly PathSegment[] = ['properties'],
): { ok: true; policies: SchedulePolicies } | { ok: false; problems: Problem[] } {
  const problems: Problem[] = [];
  const overlap = propertyValue(properties, 'overlap') ?? defaultSchedulePolicies.overlap;
  if (!overlapPolicies.includes(overlap as OverlapPolicy)) {
    problems.push(
      problemAt(
        formatPath([...at, 'overlap']),
        `must be one of ${overlapPolicies.map((name) => `"${name}"`).join(', ')}`,
        'validation.enum',
      ),
    );
  }
  const catchupWindow = checkDuration(
    properties,
    'catchupWindow',
    defaultSchedulePolicies.catchupWindowMs,
    minCatchupWindowMs,
    at,
  );
  const jitter = checkDuration(properties, 'jitter', defaultSchedulePolicies.jitterMs, 0, at);
  for (const checked of [catchupWindow, jitter]) if (!checked.ok) problems.push(checked.problem);
  if (problems.length > 0 || !catchupWindow.ok || !jitter.ok) return { ok: false, problems };
  return {
    ok: true,
    policies: {
      overlap: overlap as OverlapPolicy,
      catchupWindowMs: catchupWindow.value,
      jitterMs: jitter.value,
    },
  };
}
