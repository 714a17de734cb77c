import { TooMany } from '#definition/errors.js';
import type { RequestProject } from './request-project.js';

/**
 * A project's API requests a minute (its `requestsPerMinute`), counted by this API process in a
 * token bucket per project: full at the limit, refilled evenly over the minute, so a project may
 * burst up to its limit and then goes at its rate. In memory, like the per-user request limit
 * (`Security.RateLimits`): counting in PostgreSQL would add a write to every request, so N API
 * processes allow N times the rate.
 */
export interface ProjectRequestRate {
  /** Counts a request of the project; `TooMany` past `perMinute` (0: unlimited). */
  take(project: RequestProject, perMinute: number): void;
}

interface Bucket {
  tokens: number;
  at: number;
  perMinute: number;
}

export function createProjectRequestRate(now: () => number = Date.now): ProjectRequestRate {
  const buckets = new Map<string, Bucket>();
  return {
    take(project, perMinute) {
      if (perMinute === 0) {
        buckets.delete(project.id);
        return;
      }
      const at = now();
      const bucket = buckets.get(project.id);
      const perMs = perMinute / 60_000;
      const tokens =
        bucket === undefined || bucket.perMinute !== perMinute
          ? perMinute
          : Math.min(perMinute, bucket.tokens + (at - bucket.at) * perMs);
      if (tokens < 1) {
        buckets.set(project.id, { tokens, at, perMinute });
        const seconds = (1 - tokens) / perMs / 1000;
        throw new TooMany(
          `Project "${project.name}" made ${perMinute} API requests in the last minute, the most its limits allow (requestsPerMinute): try again in ${Math.max(1, Math.ceil(seconds))} s.`,
          { code: 'project.requests_per_minute', retryAfterSeconds: seconds },
        );
      }
      buckets.set(project.id, { tokens: tokens - 1, at, perMinute });
    },
  };
}
