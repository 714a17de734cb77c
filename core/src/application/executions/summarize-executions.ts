/**
 * The overview of a project's executions: what started in a range of time, bucket by bucket and
 * in figures, and what runs and waits now; of real runs only, dry runs counted on their own (a dry
 * run performs nothing, so it neither fails nor succeeds as a run of the workflow). PostgreSQL counts and takes the percentiles; this
 * bounds the range and lays the counts out on every bucket, empty ones included.
 */
import type { Kysely } from 'kysely';
import { Invalid } from '#definition/errors.js';
import { problemAt } from '#definition/validation/problem.js';
import * as projectExecutions from '#store/project-execution-repository.js';
import type { Database, ExecutionStatus } from '#store/tables.js';

export type SummaryBucket = 'hour' | 'day';

/** The most buckets a summary has: 31 days by the hour. */
export const maxSummaryBuckets = 744;

const bucketMs: Record<SummaryBucket, number> = { hour: 3_600_000, day: 86_400_000 };
const defaultRangeMs = 86_400_000;

export type StatusCounts = Record<Lowercase<ExecutionStatus>, number>;

export interface ExecutionSummary {
  from: Date;
  to: Date;
  bucket: SummaryBucket;
  buckets: { start: Date; counts: StatusCounts }[];
  totals: StatusCounts;
  /** Failed among the finished; null when none finished. */
  failureRate: number | null;
  durationP50Ms: number | null;
  durationP95Ms: number | null;
  runningNow: number;
  pausedNow: number;
  approvalsWaiting: number;
  recentFailures: projectExecutions.ExecutionFailureView[];
  /** The range's dry runs, left out of every other figure. */
  dryRuns: number;
}

export interface SummaryRequest {
  from?: Date;
  to?: Date;
  bucket: SummaryBucket;
  /** How many recent failures to list. */
  failures: number;
}

const noCounts = (): StatusCounts => ({
  pending: 0,
  running: 0,
  paused: 0,
  completed: 0,
  failed: 0,
  canceled: 0,
});

/** The range a request asks for, its first bucket and how many buckets it spans; `Invalid` beyond the bounds. */
function bucketedRange(request: SummaryRequest, now: Date) {
  const to = request.to ?? now;
  const from = request.from ?? new Date(to.getTime() - defaultRangeMs);
  if (from.getTime() >= to.getTime()) {
    throw new Invalid(problemAt('query.from', 'must be before `to`'));
  }
  const step = bucketMs[request.bucket];
  const first = new Date(Math.floor(from.getTime() / step) * step);
  const count = Math.ceil((to.getTime() - first.getTime()) / step);
  if (count > maxSummaryBuckets) {
    throw new Invalid(
      problemAt(
        'query.from',
        `spans ${count} buckets of a ${request.bucket} to \`to\`; at most ${maxSummaryBuckets} (a shorter range, or bucket=day)`,
      ),
    );
  }
  return { from, to, first, count, step };
}

/** Summarizes a project's executions (`GET /executions/summary`). */
export async function summarizeExecutions(
  db: Kysely<Database>,
  projectId: string,
  request: SummaryRequest,
  now = new Date(),
): Promise<ExecutionSummary> {
  const { from, to, first, count, step } = bucketedRange(request, now);
  const range = { from, to };
  const [counted, finished, active, failures, dryRuns] = await Promise.all([
    projectExecutions.countByBucket(db, projectId, {
      ...range,
      first,
      step: `1 ${request.bucket}`,
    }),
    projectExecutions.finishedFigures(db, projectId, range),
    projectExecutions.activeFigures(db, projectId),
    projectExecutions.recentFailures(db, projectId, range, request.failures),
    projectExecutions.countDryRuns(db, projectId, range),
  ]);
  const buckets = Array.from({ length: count }, (_, index) => ({
    start: new Date(first.getTime() + index * step),
    counts: noCounts(),
  }));
  const totals = noCounts();
  for (const { start, status, count: runs } of counted) {
    const bucket = buckets[Math.round((start.getTime() - first.getTime()) / step)];
    const key = status.toLowerCase() as Lowercase<ExecutionStatus>;
    if (bucket) bucket.counts[key] += runs;
    totals[key] += runs;
  }
  return {
    from,
    to,
    bucket: request.bucket,
    buckets,
    totals,
    failureRate: finished.finished > 0 ? finished.failed / finished.finished : null,
    durationP50Ms: finished.p50Ms,
    durationP95Ms: finished.p95Ms,
    runningNow: active.running,
    pausedNow: active.paused,
    approvalsWaiting: active.approvalsWaiting,
    recentFailures: failures,
    dryRuns,
  };
}
