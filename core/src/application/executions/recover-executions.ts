/**
 * Execution recovery (docs/ARCHITECTURE.md#durability). A start records an execution, then launches
 * its Temporal run (`launchExecution`); an API process killed between the two would leave an execution that
 * says Running with nothing behind it. And a run terminated outside Trellis (the Temporal UI,
 * `temporal workflow terminate`) never writes its outcome. Every API process therefore checks,
 * at start-up and then periodically, the active executions older than a grace period against
 * Temporal:
 *
 * - no run, and no run ever took the execution on: the run is started, with the same
 *   deterministic workflow id (two processes repairing at once start it once);
 * - no run, but one prepared the execution (its history is gone): Failed;
 * - the run is closed (terminated, timed out, failed, canceled) but the row is active: Failed or
 *   Canceled, its unfinished tasks Canceled, with a message saying why.
 */
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { ExecutionLog } from '#platform/observability/execution-log.js';
import type { TrellisConfig } from '#platform/config/types.js';
import * as executionRepository from '#store/execution-repository.js';
import type { ActiveExecution, ExecutionCursor } from '#store/execution-repository.js';
import type { Database } from '#store/tables.js';
import type { Logger } from '#platform/logging.js';
import { finishExecution } from './finish-execution.js';
import { clientOf } from '#platform/temporal/connection.js';
import { startDeadlineMs, startExecutionWorkflow } from './launch-execution.js';

export interface RecoveryDeps {
  db: Kysely<Database>;
  client: Client;
  /** The namespace has `TrellisProject`: the runs recovery starts carry it. */
  projectAttribute?: boolean;
  /** The clients of the projects' namespaces (`Projects.Namespaces`). */
  inNamespace?: (namespace: string) => Client;
  config: TrellisConfig;
  logger: Logger;
  /** Counts and logs the runs recovery ends. */
  executionLog?: ExecutionLog;
}

export interface RecoveryOptions {
  /**
   * Executions younger than this are left alone: a live API may still be starting their run.
   * Default: the start deadline plus a margin, after which that start has succeeded or failed.
   */
  graceMs?: number;
  /** At most this many executions of each kind are checked per pass. Default 100. */
  batchSize?: number;
  /** Where the previous pass stopped in each scan (the periodic recovery carries them on). */
  cursors?: RecoveryCursors;
}

export interface RecoveryCursors {
  unprepared?: ExecutionCursor;
  prepared?: ExecutionCursor;
}

export interface RecoveryReport {
  /** Executions whose missing run was started. */
  started: string[];
  /** Executions marked finished because their run ended (or vanished) without saying so. */
  finished: string[];
  /** Executions that could not be checked (Temporal unreachable, ...); the next pass retries. */
  failed: { executionId: string; reason: string }[];
  /** Where the next pass continues. */
  cursors: RecoveryCursors;
  /** When the youngest skipped execution no run has touched comes of age, if there is one. */
  nextDueAt: Date | null;
}

const defaultGraceMs = startDeadlineMs + 5_000;
const defaultBatchSize = 100;
/** Temporal calls in flight at once during a pass. */
const concurrency = 10;

type Repair =
  | { action: 'none' }
  | { action: 'start' }
  | { action: 'finish'; status: 'Failed' | 'Canceled'; message: string };

/** One recovery pass over the active executions older than the grace period. */
export async function recoverExecutions(
  deps: RecoveryDeps,
  options: RecoveryOptions = {},
): Promise<RecoveryReport> {
  const graceMs = options.graceMs ?? defaultGraceMs;
  const limit = options.batchSize ?? defaultBatchSize;
  const cutoff = new Date(Date.now() - graceMs);
  const report: RecoveryReport = {
    started: [],
    finished: [],
    failed: [],
    cursors: {},
    nextDueAt: null,
  };

  for (const prepared of [false, true]) {
    const key = prepared ? 'prepared' : 'unprepared';
    const after = options.cursors?.[key];
    const rows = await executionRepository.listActiveExecutions(deps.db, {
      prepared,
      startedBefore: cutoff,
      ...(after ? { after } : {}),
      limit,
    });
    for (let start = 0; start < rows.length; start += concurrency) {
      await Promise.all(
        rows.slice(start, start + concurrency).map((row) => repair(deps, row, prepared, report)),
      );
    }
    // A full batch continues after its last row next time; a short one starts over.
    const last = rows.at(-1);
    if (rows.length === limit && last) {
      report.cursors[key] = { executionStart: last.executionStart, id: last.id };
    }
  }

  const [young] = await executionRepository.listActiveExecutions(deps.db, {
    prepared: false,
    startedFrom: cutoff,
    limit: 1,
  });
  if (young) report.nextDueAt = new Date(young.executionStart.getTime() + graceMs);
  return report;
}

async function repair(
  deps: RecoveryDeps,
  row: ActiveExecution,
  prepared: boolean,
  report: RecoveryReport,
): Promise<void> {
  const { config, logger } = deps;
  const log = logger.child({
    executionId: row.id,
    workflowId: row.workflowId,
    temporalWorkflowId: row.temporalWorkflowId,
  });
  try {
    const decision = await decide(clientOf(deps, row.temporalNamespace), row, prepared);
    if (decision.action === 'start') {
      await startExecutionWorkflow(deps, config, row);
      report.started.push(row.id);
      log.warn('execution recovery: started the Temporal run the execution never got');
    } else if (decision.action === 'finish') {
      const ended = await finishExecution(deps, row.id, {
        by: 'abandonment',
        status: decision.status,
        message: decision.message,
        at: new Date(),
      });
      if (ended) {
        report.finished.push(row.id);
        log.warn(
          { status: decision.status, reason: decision.message },
          'execution recovery: recorded the outcome of a run that ended without writing it',
        );
      }
    }
  } catch (error) {
    // Logged once per pass by the caller: an unreachable Temporal fails every row alike.
    report.failed.push({ executionId: row.id, reason: (error as Error).message });
    log.debug({ err: error }, 'execution recovery: could not check the execution');
  }
}

/** What the execution needs, from what Temporal knows of its run. */
async function decide(client: Client, row: ActiveExecution, prepared: boolean): Promise<Repair> {
  let status;
  try {
    const description = await client.withDeadline(Date.now() + startDeadlineMs, () =>
      client.workflow.getHandle(row.temporalWorkflowId).describe(),
    );
    status = description.status.name;
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
    if (!prepared) return { action: 'start' };
    return {
      action: 'finish',
      status: 'Failed',
      message: 'Failed: the Temporal run of this execution no longer exists.',
    };
  }
  switch (status) {
    case 'TERMINATED':
      return {
        action: 'finish',
        status: 'Canceled',
        message:
          'Canceled: the Temporal run was terminated outside Trellis (e.g. from the Temporal UI).',
      };
    case 'CANCELLED':
      return {
        action: 'finish',
        status: 'Canceled',
        message: 'Canceled: the Temporal run was canceled before it could record its outcome.',
      };
    case 'TIMED_OUT':
      return {
        action: 'finish',
        status: 'Failed',
        message: 'Failed: the Temporal run timed out (a Temporal execution timeout).',
      };
    case 'FAILED':
    case 'COMPLETED':
      // A run writes its outcome before it closes; closed without it, it failed on the way.
      return {
        action: 'finish',
        status: 'Failed',
        message: `Failed: the Temporal run ended (${status.toLowerCase()}) without recording its outcome.`,
      };
    default:
      // Running, paused by an operator, continued as new: the run is still there.
      return { action: 'none' };
  }
}

export interface ExecutionRecovery {
  /** Stops the timer and waits for a pass in progress. */
  stop(): Promise<void>;
}

/**
 * Runs `recoverExecutions` now and then every `intervalMs` (default 30 s), sooner when a skipped
 * execution comes of age, until stopped. Every API process runs one, so a crash is repaired by
 * whichever API survives it.
 */
export function startExecutionRecovery(
  deps: RecoveryDeps,
  options: Omit<RecoveryOptions, 'cursors'> & { intervalMs?: number } = {},
): ExecutionRecovery {
  const intervalMs = options.intervalMs ?? 30_000;
  const logger = deps.logger.child({ component: 'execution-recovery' });
  let cursors: RecoveryCursors = {};
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<void> | undefined;
  let stopped = false;

  const runPass = async () => {
    let delay = intervalMs;
    try {
      const report = await recoverExecutions({ ...deps, logger }, { ...options, cursors });
      cursors = report.cursors;
      if (report.started.length + report.finished.length > 0) {
        logger.info(
          { started: report.started, finished: report.finished },
          'execution recovery pass repaired executions',
        );
      }
      if (report.failed.length > 0) {
        logger.warn(
          { failed: report.failed.length, first: report.failed[0] },
          'execution recovery could not check some executions; will retry',
        );
      }
      if (report.nextDueAt) {
        delay = Math.min(intervalMs, Math.max(1_000, report.nextDueAt.getTime() - Date.now()));
      }
    } catch (error) {
      logger.warn({ err: error }, 'execution recovery pass failed; will retry');
    }
    if (!stopped) {
      timer = setTimeout(() => {
        pass = runPass();
      }, delay);
      // Recovery alone never keeps the process alive.
      timer.unref();
    }
  };
  pass = runPass();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await pass;
    },
  };
}
