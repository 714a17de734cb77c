import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import * as executionRepository from '#store/execution-repository.js';
import * as approvalRepository from '#store/approval-repository.js';
import * as logRepository from '#store/log-repository.js';
import * as taskExecutionRepository from '#store/task-execution-repository.js';
import type { ApprovalStatus, ExecutionStatus, LogLevel } from '#store/tables.js';
import { evaluateCondition } from '#definition/expressions/evaluate.js';
import { finishExecution } from '#application/executions/finish-execution.js';
import { approveSignal, decisionMessage } from '#protocol/messages.js';
import type { DefinitionCache } from './definitions.js';
import { expressionScope, taskOf } from './definitions.js';
import type { EngineDeps } from './deps.js';
import { dryRunApprovalMessage, dryRunDecider } from './dry-run.js';
import { permanentCause } from './permanent-failures.js';
import { runKey } from './reset-runs.js';

/** A log entry the engine writes about a transition; `key` is unique within the execution. */
export interface EngineLog {
  taskExecutionId: string | null;
  level: LogLevel;
  message: string;
  exception?: string;
  key: string;
}

/**
 * A decision that reached the run: a signal (the API's, which recorded it first, or one sent from
 * Temporal directly), or the approval's timeout.
 */
export interface DecisionClaim {
  approvalId: string;
  taskExecutionId: string;
  approved: boolean;
  /** An update (the API's, or one sent from Temporal), a signal, or the approval's timeout. */
  source: 'update' | 'signal' | 'timeout';
  /**
   * Who decided, when the run knows: an update names them (absent in histories from before
   * updates: a signal's decider is `temporal`, unless the API recorded the decision first).
   */
  decidedBy?: string;
  reason?: string;
  /** The values given with an approval; how, and through which notification's link. */
  inputs?: Record<string, unknown>;
  via?: 'Api' | 'Link';
  notification?: string;
}

/** The decision an approval holds once a claim was settled: the first one recorded counts. */
export interface SettledDecision {
  approvalId: string;
  status: ApprovalStatus;
  /** Who decided, and why (absent in histories recorded before updates). */
  decidedBy?: string | null;
  reason?: string | null;
}

/**
 * The engine's bookkeeping since its last write, in one (local) activity: tasks skipped,
 * rejected or canceled, approvals to ask for, decisions to settle, the execution's status, and
 * the log entries saying why. Every write is idempotent, so a replay that runs it again changes
 * nothing.
 */
export interface ProgressInput {
  executionId: string;
  /** The run's id when an operator reset it from Temporal (reset-runs.ts). */
  run?: string;
  tasks: taskExecutionRepository.TaskTransition[];
  /** Ready tasks that need a person; their condition is checked first. */
  approvals: Array<{ taskExecutionId: string; taskName: string }>;
  /**
   * Decisions to record unless one was recorded first (absent in histories recorded before the
   * run settled decisions itself).
   */
  decisions?: DecisionClaim[];
  logs: EngineLog[];
  execution?:
    | { status: Extract<ExecutionStatus, 'Running' | 'Paused'> }
    | { status: Extract<ExecutionStatus, 'Completed' | 'Failed' | 'Canceled'>; message: string };
}

/** An approval was asked for, or the task ended before that (its condition was false or broken). */
export type ApprovalOutcome =
  | { taskName: string; approvalId: string }
  | { taskName: string; status: 'Skipped' | 'Failed'; message: string };

export interface ProgressResult {
  approvals: ApprovalOutcome[];
  /** One per claim, in order; absent when there were none. */
  decisions?: SettledDecision[];
}

/** Log entries written in the statement of a status change (8 bind parameters each). */
const MAX_LOGS_WITH_STATUS = 1000;

export function recordProgressActivity(deps: EngineDeps, definitions: DefinitionCache) {
  const { db, claimRun } = deps;

  async function requestApproval(
    executionId: string,
    request: ProgressInput['approvals'][number],
    at: Date,
    run: string | undefined,
  ): Promise<{ outcome: ApprovalOutcome; log: logRepository.NewLogEntry }> {
    const loaded = await definitions.get(executionId);
    const task = taskOf(loaded, request.taskName);
    const log = (level: LogLevel, message: string, exception?: string) => ({
      executionId,
      taskExecutionId: request.taskExecutionId,
      dedupeKey: runKey(run, `${request.taskExecutionId}:approval`),
      level,
      message,
      exception: exception ?? null,
      timeStamp: at,
    });
    const endWithoutApproval = async (
      status: 'Failed' | 'Skipped',
      level: LogLevel,
      message: string,
    ) => {
      await taskExecutionRepository.applyTaskTransitions(
        db,
        [{ id: request.taskExecutionId, status, message }],
        at,
        run,
      );
      return { outcome: { taskName: task.name, status, message }, log: log(level, message) };
    };
    const condition = task.executionCondition?.expression;
    if (condition !== undefined) {
      let holds: boolean;
      try {
        holds = evaluateCondition(condition, await expressionScope(db, loaded, task.name));
      } catch (error) {
        const message = `Failed: the condition could not be evaluated: ${(error as Error).message}`;
        return endWithoutApproval('Failed', 'Error', message);
      }
      if (!holds) {
        return endWithoutApproval(
          'Skipped',
          'Info',
          `Skipped: the condition ${condition} is false.`,
        );
      }
    }
    const comment = task.manualApproval?.comment ?? '';
    const { timeoutMilliseconds, onTimeout } = task.manualApproval ?? {};
    const approval = await approvalRepository.createApproval(db, {
      executionId,
      taskExecutionId: request.taskExecutionId,
      taskName: task.name,
      comment,
      ...(timeoutMilliseconds !== undefined && onTimeout !== undefined
        ? { timeout: { milliseconds: timeoutMilliseconds, onTimeout } }
        : {}),
      at,
      run,
      form: task.manualApproval?.inputs,
      approvers: task.manualApproval?.approvers,
    });
    const message = loaded.execution.dryRun
      ? dryRunApprovalMessage(approval.id, comment)
      : `Waiting for approval ${approval.id}${comment ? `: ${comment}` : '.'}`;
    await taskExecutionRepository.applyTaskTransitions(
      db,
      [{ id: request.taskExecutionId, status: 'WaitingForApproval', message }],
      at,
      run,
    );
    if (loaded.execution.dryRun) {
      await taskExecutionRepository.noteDryRunApproval(db, request.taskExecutionId, {
        approvalId: approval.id,
        comment,
      });
    }
    return { outcome: { taskName: task.name, approvalId: approval.id }, log: log('Info', message) };
  }

  /**
   * Records a claimed decision unless the approval was decided first (the API records a person's
   * decision before it signals a run from before updates; an update names its decider, a signal
   * sent from Temporal directly is decided by `temporal`), and writes the decision that holds to
   * the task: its log entry, and for a rejection its failure.
   */
  async function settleDecision(
    executionId: string,
    claim: DecisionClaim,
    at: Date,
    run: string | undefined,
  ): Promise<{ settled: SettledDecision; log?: logRepository.NewLogEntry }> {
    const approval = await approvalRepository.settleDecision(db, {
      executionId,
      approvalId: claim.approvalId,
      decision: claim.approved ? 'Approved' : 'Rejected',
      decidedBy:
        claim.source === 'timeout'
          ? approvalRepository.systemDecider
          : (claim.decidedBy ?? approvalRepository.temporalDecider),
      reason: claim.reason,
      ...(claim.approved && claim.inputs ? { inputs: claim.inputs } : {}),
      via: claim.source === 'timeout' ? 'System' : (claim.via ?? 'Temporal'),
      ...(claim.notification !== undefined ? { notification: claim.notification } : {}),
      at,
    });
    const status = approval?.status ?? 'Pending';
    const settled = {
      approvalId: claim.approvalId,
      status,
      decidedBy: approval?.decidedBy ?? null,
      reason: approval?.reason ?? null,
    };
    if (status !== 'Approved' && status !== 'Rejected') return { settled };
    const message = decisionMessage(
      status === 'Approved',
      approval?.decidedBy ?? approvalRepository.systemDecider,
      approval?.reason,
    );
    if (status === 'Rejected') {
      await taskExecutionRepository.applyTaskTransitions(
        db,
        [{ id: claim.taskExecutionId, status: 'Failed', message }],
        at,
        run,
      );
    }
    const log = {
      executionId,
      taskExecutionId: claim.taskExecutionId,
      dedupeKey: runKey(run, `${claim.taskExecutionId}:decision`),
      level: status === 'Approved' ? ('Info' as const) : ('Error' as const),
      message,
      exception: null,
      timeStamp: at,
    };
    return { settled, log };
  }

  /**
   * Bookkeeping that fails the same way on every retry would hold the run forever: the
   * execution ends Failed with the reason instead, and the workflow with a non-retryable failure.
   */
  return async function recordProgress(input: ProgressInput): Promise<ProgressResult> {
    try {
      return await record(input);
    } catch (error) {
      const cause = permanentCause(error);
      if (cause === null) throw error;
      const message = `The execution cannot go on: its progress could not be recorded: ${cause}`;
      await finishExecution(deps, input.executionId, {
        by: 'abandonment',
        status: 'Failed',
        message,
        at: new Date(),
        logKey: 'engine:unrecordable',
      });
      throw ApplicationFailure.nonRetryable(message, 'ProgressUnrecordable');
    }
  };

  /**
   * A dry run waits for no one: each approval it asked for is approved at once, by a signal to
   * its own run (sent once the ask is recorded; the run keeps a decision that arrives before it
   * has the approval's id), which records the decision as any other.
   */
  async function approveDryRunApprovals(
    executionId: string,
    outcomes: ApprovalOutcome[],
  ): Promise<void> {
    const asked = outcomes.flatMap((outcome) => ('approvalId' in outcome ? [outcome] : []));
    if (asked.length === 0 || !(await definitions.get(executionId)).execution.dryRun) return;
    const context = Context.current();
    const workflowId = context.info.workflowExecution?.workflowId;
    if (workflowId === undefined) throw new Error('A dry run approval outside its run');
    const run = context.client.workflow.getHandle(workflowId);
    for (const { approvalId } of asked) {
      await run.signal(approveSignal, {
        approvalId,
        decidedBy: dryRunDecider,
        reason: 'a dry run asks no one.',
      });
    }
  }

  async function record(input: ProgressInput): Promise<ProgressResult> {
    const at = new Date();
    const { executionId, run } = input;
    await claimRun(executionId, run);
    if (input.tasks.length > 0) {
      await taskExecutionRepository.applyTaskTransitions(db, input.tasks, at, run);
    }
    const requested = await Promise.all(
      input.approvals.map((request) => requestApproval(executionId, request, at, run)),
    );
    const decisions = await Promise.all(
      (input.decisions ?? []).map((claim) => settleDecision(executionId, claim, at, run)),
    );
    const logs: logRepository.NewLogEntry[] = [
      ...decisions.flatMap((decision) => (decision.log ? [decision.log] : [])),
      ...input.logs.map((entry) => ({
        executionId,
        taskExecutionId: entry.taskExecutionId,
        dedupeKey: entry.key,
        level: entry.level,
        message: entry.message,
        exception: entry.exception ?? null,
        timeStamp: at,
      })),
      ...requested.map((result) => result.log),
    ];
    const execution = input.execution;
    // A status change carries the log entries in its own statement (one round trip fewer at the
    // end of every run), unless there are more than one statement should bind.
    const withStatus = execution && logs.length <= MAX_LOGS_WITH_STATUS ? logs : [];
    if (logs.length > withStatus.length) await logRepository.appendLogs(db, logs);
    if (execution?.status === 'Running') {
      await executionRepository.markExecutionRunning(db, executionId, withStatus, run);
    } else if (execution?.status === 'Paused') {
      await executionRepository.markExecutionPaused(db, executionId, withStatus, run);
    } else if (execution && 'message' in execution) {
      await finishExecution(deps, executionId, {
        by: 'run',
        status: execution.status,
        message: execution.message,
        at,
        logs: withStatus,
        run,
      });
    }
    await approveDryRunApprovals(
      executionId,
      requested.map((result) => result.outcome),
    );
    return {
      approvals: requested.map((result) => result.outcome),
      ...(input.decisions ? { decisions: decisions.map((decision) => decision.settled) } : {}),
    };
  }
}
