import type { Tracer } from '@opentelemetry/api';
import type { Kysely } from 'kysely';
import type { TrellisConfig } from '#platform/config/types.js';
import type { Database } from '#store/tables.js';
import type { Logger } from '#platform/logging.js';
import type { ExecutionLog } from '#platform/observability/execution-log.js';
import type { Metrics } from '#platform/observability/metrics.js';
import type { PluginRunner } from '#plugin-host/runner.js';
import type { RunClaims } from './reset-runs.js';

/** What the activities need; built once per worker process. */
export interface ActivityDeps {
  db: Kysely<Database>;
  runner: PluginRunner;
  logger: Logger;
  config: TrellisConfig;
  /** Run and attempt counts; none by default. */
  metrics?: Metrics;
  /** With tracing on: each plugin call gets a span, and the plugin its trace context. */
  tracer?: Tracer;
  /** The namespace has the `TrellisStatus` search attribute: runs keep it current. */
  statusAttribute?: boolean;
  /** The namespace has `TrellisProject`: the children runs start carry their project's name. */
  projectAttribute?: boolean;
  /** The namespace has `TrellisDryRun`: a dry run's children carry it. */
  dryRunAttribute?: boolean;
}

/** The activities' deps with what they derive from them. */
export interface EngineDeps extends ActivityDeps {
  metrics: Metrics;
  /** The process log's lines (and counts) of runs starting and ending. */
  executionLog: ExecutionLog;
  /** Takes an execution over for a run reset from Temporal (reset-runs.ts). */
  claimRun: RunClaims;
}
