import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Logger } from '../logging.js';

/**
 * What a Trellis process counts, for Prometheus (`/metrics`, README "Operating Trellis"). One
 * registry per process (per `createTrellis`), so two processes in one test runner never share
 * counts. Labels hold only bounded values: operationIds of the contract (never raw paths), HTTP
 * statuses, execution statuses, installed plugin types, attempt outcomes and the names of
 * projects (which instance admins create; never a name a caller sent that is no project).
 *
 * With `Metrics.Enabled` false every process gets `noMetrics`, whose methods do nothing: the
 * request pipeline and the activities pay one empty call.
 */
export interface Metrics {
  readonly enabled: boolean;
  /**
   * One API request, by its operationId (`other` outside the contract), its project's name (``
   * for an instance-wide operation or a request answered before its project was known) and
   * status.
   */
  observeRequest(operation: string, project: string, status: number, seconds: number): void;
  /** A run of project `projectId` started (its execution became Running in the worker). */
  executionStarted(projectId: string): void;
  /** A run of project `projectId` ended with `status` after `seconds` (from its start). */
  executionFinished(projectId: string, status: string, seconds: number): void;
  /**
   * One task attempt of a run of project `projectId` (undefined: its execution could not be
   * read), by its plugin type and what came of it.
   */
  taskAttempt(
    projectId: string | undefined,
    plugin: string,
    outcome: string,
    seconds: number,
  ): void;
  /**
   * An event stream (`GET .../executions/{id}/events`) opened: `trellis_event_streams_open`
   * goes up by one, and down again when the returned function is first called (the stream
   * closed, whichever way).
   */
  trackEventStream(): () => void;
  /** More Prometheus text appended to every scrape (the Temporal SDK's worker metrics). */
  addExposition(source: () => Promise<string>): void;
  /** The Prometheus text exposition, and its content type. */
  scrape(): Promise<{ contentType: string; text: string }>;
}

/** A process without metrics: every method does nothing. */
export const noMetrics: Metrics = Object.freeze({
  enabled: false,
  observeRequest() {},
  executionStarted() {},
  executionFinished() {},
  taskAttempt() {},
  trackEventStream: () => () => {},
  addExposition() {},
  scrape: () => Promise.reject(new Error('Metrics are disabled (Metrics.Enabled).')),
});

/** Seconds; from a cached GET (a millisecond) to a start-and-wait (up to a minute). */
const requestBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60];
/** Seconds; a no-op attempt takes a millisecond, an HTTP call or a delay much longer. */
const attemptBuckets = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800];
/** Seconds; a run takes from a fraction of a second to days (approvals). */
const executionBuckets = [0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800, 3600, 21600, 86400];

/**
 * The metrics of one process. `waitingApprovals` feeds the approvals gauge at scrape time, by
 * project name; `projectName` names the project of a run (undefined: it no longer exists).
 */
export function createMetrics(deps: {
  waitingApprovals: () => Promise<{ project: string; waiting: number }[]>;
  projectName: (projectId: string) => Promise<string | undefined>;
  logger: Logger;
}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const requests = new Counter({
    name: 'trellis_http_requests_total',
    help: 'API requests, by operationId of the OpenAPI contract (other: outside it), status and project.',
    labelNames: ['operation', 'status', 'project'] as const,
    registers,
  });
  const requestDuration = new Histogram({
    name: 'trellis_http_request_duration_seconds',
    help: 'Time from a request arriving to its response being written.',
    labelNames: ['operation', 'status', 'project'] as const,
    buckets: requestBuckets,
    registers,
  });
  const executionsStarted = new Counter({
    name: 'trellis_executions_started_total',
    help: 'Runs started (their execution became Running), by project.',
    labelNames: ['project'] as const,
    registers,
  });
  const executionsFinished = new Counter({
    name: 'trellis_executions_finished_total',
    help: 'Runs ended, by final status (Completed, Failed, Canceled) and project.',
    labelNames: ['status', 'project'] as const,
    registers,
  });
  const executionDuration = new Histogram({
    name: 'trellis_execution_duration_seconds',
    help: 'Time from an execution starting to its end, by final status and project.',
    labelNames: ['status', 'project'] as const,
    buckets: executionBuckets,
    registers,
  });
  const attempts = new Counter({
    name: 'trellis_task_attempts_total',
    help: 'Task attempts, by plugin type, outcome (Completed, Skipped, Retrying, Failed, Canceled) and project.',
    labelNames: ['plugin', 'outcome', 'project'] as const,
    registers,
  });
  const attemptDuration = new Histogram({
    name: 'trellis_task_attempt_duration_seconds',
    help: 'Time one task attempt took, by plugin type, outcome and project.',
    labelNames: ['plugin', 'outcome', 'project'] as const,
    buckets: attemptBuckets,
    registers,
  });
  const eventStreams = new Gauge({
    name: 'trellis_event_streams_open',
    help: 'Execution event streams this process is serving now.',
    registers,
  });
  const { waitingApprovals, logger } = deps;
  new Gauge({
    name: 'trellis_approvals_waiting',
    help: 'Approvals waiting for a decision in runs still going, by project, in the whole database (the same in every process).',
    labelNames: ['project'] as const,
    registers,
    async collect() {
      try {
        const counts = await waitingApprovals();
        this.reset();
        for (const { project, waiting } of counts) this.set({ project }, waiting);
      } catch (error) {
        // A scrape still answers while the database does not; the gauge keeps its last value.
        logger.debug({ err: error }, 'metrics: could not count the waiting approvals');
      }
    },
  });

  // Children per label set, so the hot paths do not hash their labels again on every call.
  const requestSeries = new Map<
    string,
    { count: Counter.Internal; duration: Histogram.Internal<'operation' | 'status' | 'project'> }
  >();
  const inProject = labelByProject(deps.projectName, logger);
  const exposition: Array<() => Promise<string>> = [];

  return {
    enabled: true,
    observeRequest(operation, project, status, seconds) {
      const key = `${operation} ${status} ${project}`;
      let series = requestSeries.get(key);
      if (!series) {
        const labels = { operation, status: String(status), project };
        series = { count: requests.labels(labels), duration: requestDuration.labels(labels) };
        requestSeries.set(key, series);
      }
      series.count.inc();
      series.duration.observe(seconds);
    },
    executionStarted(projectId) {
      inProject(projectId, (project) => executionsStarted.inc({ project }));
    },
    executionFinished(projectId, status, seconds) {
      inProject(projectId, (project) => {
        executionsFinished.inc({ status, project });
        executionDuration.observe({ status, project }, seconds);
      });
    },
    taskAttempt(projectId, plugin, outcome, seconds) {
      inProject(projectId, (project) => {
        attempts.inc({ plugin, outcome, project });
        attemptDuration.observe({ plugin, outcome, project }, seconds);
      });
    },
    trackEventStream() {
      eventStreams.inc();
      let open = true;
      return () => {
        if (!open) return;
        open = false;
        eventStreams.dec();
      };
    },
    addExposition(source) {
      exposition.push(source);
    },
    async scrape() {
      const parts = await Promise.all([
        registry.metrics(),
        ...exposition.map((source) =>
          source().catch((error: unknown) => {
            logger.debug({ err: error }, 'metrics: a source did not answer');
            return '';
          }),
        ),
      ]);
      const text = parts
        .filter((part) => part.length > 0)
        .map((part) => (part.endsWith('\n') ? part : `${part}\n`))
        .join('');
      return { contentType: registry.contentType, text };
    },
  };
}

/**
 * Records a sample labelled with the name of project `projectId`, once that is known (`` for a
 * project that is gone, or when the look-up failed). `projectName` keeps names it has read (the
 * project repository's row cache), so a renamed project's series follow within seconds.
 */
function labelByProject(
  projectName: (projectId: string) => Promise<string | undefined>,
  logger: Logger,
): (projectId: string | undefined, record: (project: string) => void) => void {
  return (projectId, record) => {
    if (projectId === undefined) {
      record('');
      return;
    }
    void projectName(projectId).then(
      (found) => record(found ?? ''),
      (error: unknown) => {
        logger.debug({ err: error }, 'metrics: could not name a project');
        record('');
      },
    );
  };
}
