/**
 * A project's fair share of the instance (issue 29): the limits it runs under (its own, else the
 * instance's `Projects.Limits`), and the starts-a-minute check every path that starts an
 * execution passes. The running-at-once limit is a concurrency slot of the project (the worker's
 * admission); requests a minute are counted in PostgreSQL, across API processes.
 */
import type { Kysely } from 'kysely';
import { TooMany } from '#definition/errors.js';
import type { TrellisConfig } from '#platform/config/types.js';
import * as projectRepository from '#store/project-repository.js';
import type { Database, ProjectLimits } from '#store/tables.js';

/** The instance's defaults (`Projects.Limits`). */
export type LimitDefaults = TrellisConfig['Projects']['Limits'];

/** The limits a project runs under: each a whole number, 0 for unlimited. */
export type Limits = Required<ProjectLimits>;

/** The project's own limits over the instance's defaults. */
export function limitsOf(own: ProjectLimits, defaults: LimitDefaults): Limits {
  return {
    runningExecutions: own.runningExecutions ?? defaults.RunningExecutions,
    startsPerMinute: own.startsPerMinute ?? defaults.StartsPerMinute,
    requestsPerMinute: own.requestsPerMinute ?? defaults.RequestsPerMinute,
  };
}

/** The limits of the project with this id; the defaults when it is gone. */
export async function projectLimits(
  db: Kysely<Database>,
  projectId: string,
  defaults: LimitDefaults,
): Promise<Limits & { projectName: string }> {
  const row = await projectRepository.projectById(db, projectId);
  return { ...limitsOf(row?.limits ?? {}, defaults), projectName: row?.name ?? projectId };
}

const minuteMs = 60_000;

/**
 * `TooMany` (429 with `Retry-After`) when the project has started as many executions in the last
 * minute as `startsPerMinute` allows, counted in PostgreSQL across processes. Exact when `db` is a
 * transaction that holds the project's start lock (`lockStarts`) until the start is written.
 */
export async function assertMayStart(
  db: Kysely<Database>,
  projectId: string,
  limits: Pick<Limits, 'startsPerMinute'> & { projectName: string },
  now = new Date(),
): Promise<void> {
  const limit = limits.startsPerMinute;
  if (limit === 0) return;
  const since = new Date(now.getTime() - minuteMs);
  const oldest = await projectRepository.nthLatestStart(db, projectId, since, limit);
  if (oldest === undefined) return;
  const seconds = (oldest.getTime() + minuteMs - now.getTime()) / 1000;
  throw new TooMany(
    `Project "${limits.projectName}" has started ${limit} executions in the last minute, the most its limits allow (startsPerMinute): try again in ${Math.max(1, Math.ceil(seconds))} s.`,
    { code: 'project.starts_per_minute', retryAfterSeconds: seconds },
  );
}

/**
 * `TooMany` (429 with `Retry-After`) when the project has made as many API requests in the last
 * minute as `requestsPerMinute` allows; counts the request otherwise. The last minute is a
 * sliding window over two fixed ones (the current minute's count, plus the previous minute's
 * weighted by how much of it the last sixty seconds still cover), counted in PostgreSQL so that
 * every API process shares it.
 */
export async function assertMayRequest(
  db: Kysely<Database>,
  project: { id: string; name: string },
  perMinute: number,
): Promise<void> {
  if (perMinute === 0) return;
  const window = await projectRepository.countRequest(db, project.id);
  if (requestsInLastMinute(window) <= perMinute) return;
  await projectRepository.uncountRequest(db, project.id);
  const seconds = secondsUntilRequestAllowed(window, perMinute);
  throw new TooMany(
    `Project "${project.name}" made ${perMinute} API requests in the last minute, the most its limits allow (requestsPerMinute): try again in ${Math.max(1, Math.ceil(seconds))} s.`,
    { code: 'project.requests_per_minute', retryAfterSeconds: seconds },
  );
}

/** The sliding window's count: the current minute's, and the share of the previous one it covers. */
export function requestsInLastMinute(window: projectRepository.RequestWindow): number {
  return window.previousCount * (1 - window.elapsed) + window.count;
}

/**
 * How long until a request refused at `window` (counted in it) would be let through, with no
 * other request in between.
 */
export function secondsUntilRequestAllowed(
  window: projectRepository.RequestWindow,
  perMinute: number,
): number {
  const { previousCount, count, elapsed } = window;
  const left = 1 - elapsed;
  // While the previous minute slides out of the window.
  if (previousCount > 0) {
    const minutes = (requestsInLastMinute(window) - perMinute) / previousCount;
    if (minutes <= left) return minutes * 60;
  }
  // Past the minute, the current one slides out in its turn (`count - 1` others, then this one).
  const others = count - 1;
  const into = others === 0 ? 0 : Math.max(0, 1 - (perMinute - 1) / others);
  return (left + into) * 60;
}
