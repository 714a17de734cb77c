/**
 * The messages of the `trellisExecution` workflow: its type name, input, signals and query. The
 * API (start, cancel, approve, reject), the schedules (input) and the workflow itself use these
 * constants, never strings. They live in core because both sides of the contract import them;
 * the workflow bundle does too, so this file stays deterministic (no Node, no I/O).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RunDefinition } from './run-definition.js';
import type { ApprovalStatus, ExecutionStatus, TaskStatus } from './statuses.js';

/**
 * The Temporal workflow type every Trellis execution starts as: runs of it take every versioned
 * behaviour from their start, without a patch marker, and carry their `TrellisStatus` among
 * their start attributes (workflows-worker/src/workflows/run-version.ts).
 */
export const executionWorkflowType = 'trellisExecutionV2';

/**
 * The type Trellis executions started as until 2026-11-29 (their behaviours patched in one by
 * one). Still registered, so that runs started before finish on its code; it can go once no
 * open run is of it (README, "Upgrading").
 */
export const firstExecutionWorkflowType = 'trellisExecution';

/**
 * What starts a run: an execution the API already created (its rows exist), or a Temporal
 * Schedule firing for a trigger (the first activity creates the rows, keyed by the Temporal
 * workflow id so a retried fire cannot create two).
 */
export type ExecutionInput =
  | { executionId: string; prepared?: PreparedRun }
  | { scheduled: { workflowId: string; triggerId: string } };

/**
 * A run the API prepared as it created the execution (Running, its task rows written): the
 * run starts on its tasks at once, without a prepare activity, and its first write records
 * `started` (the entry that says a run took the execution on). Only in the input of runs
 * started since 2026-11-29; a run without it prepares itself in its first activity, as every
 * run did before, and its history replays so.
 */
export interface PreparedRun {
  run: RunDefinition;
  /** The namespace has the `TrellisStatus` search attribute, so the run keeps it current. */
  statusAttribute?: true;
  /** The execution log's first entry: "Execution started (3 tasks)." */
  started: string;
}

/**
 * Dedupe key of the entry that opens an execution's log ("Execution started (3 tasks)."): the
 * mark that a Temporal run took the execution on (recovery restarts only executions without
 * it). Written by the run's prepare activity, or, for a run the API prepared, with its first
 * write.
 */
export const executionStartedLogKey = 'engine:started';

/**
 * A decision on an approval. The API records it before it signals, and the run acts on the
 * decision recorded first; a signal sent from Temporal directly (its UI or CLI) carries only
 * `approvalId` (and perhaps `reason`), and the run records it itself, decided by `temporal`.
 */
export interface DecisionSignal {
  approvalId: string;
  /** Who decided (the API's user); absent from a signal sent from Temporal directly. */
  decidedBy?: string;
  /** Why, as the decider said. */
  reason?: string;
}

export type ApproveSignal = DecisionSignal;
export type RejectSignal = DecisionSignal;

export interface CancelSignal {
  /** Who asked, for the execution's log. */
  requestedBy?: string;
}

/** The live state of a run, for operators (Temporal UI "Queries") and tests. */
export interface ExecutionState {
  executionId: string | null;
  status: ExecutionStatus;
  tasks: Record<string, TaskStatus>;
  /** The approvals the run waits for (absent before it asked for any). */
  approvals?: PendingApproval[];
}

/** An approval the run waits for: decide it with the `approve` or `reject` update. */
export interface PendingApproval {
  approvalId: string;
  taskName: string;
}

/**
 * A decision sent as an update (`approve`, `reject`): by the API, or by an operator from the
 * Temporal UI or CLI (`temporal workflow update execute --name approve --input
 * '{"approvalId": "…", "decidedBy": "alice"}'`). The run records it in PostgreSQL itself, once.
 */
export interface DecisionUpdate {
  approvalId: string;
  /** Who decided; `temporal` when absent. */
  decidedBy?: string;
  /** Why, as the decider said. */
  reason?: string;
  /** The values given with an approval, validated by the API against `manualApproval.inputs`. */
  inputs?: Record<string, unknown>;
  /** How the decision was made: the API, or an approval link; `Temporal` when absent. */
  via?: 'Api' | 'Link';
  /** The notification event whose approval link decided (with `via: 'Link'`). */
  notification?: string;
}

/** What a decision carries besides yes or no, passed on as it came (an update's extras). */
export type DecisionExtras = Pick<DecisionUpdate, 'inputs' | 'via' | 'notification'>;

/** The extras of a decision update that are well-formed (one sent by hand may carry anything). */
export function decisionExtras(input: DecisionUpdate): DecisionExtras {
  const { inputs, via, notification } = input;
  return {
    ...(typeof inputs === 'object' && inputs !== null && !Array.isArray(inputs) ? { inputs } : {}),
    ...(via === 'Api' || via === 'Link' ? { via } : {}),
    ...(typeof notification === 'string' ? { notification } : {}),
  };
}

/** What a decision update answers: the approval as it was recorded. */
export interface DecisionResult {
  approvalId: string;
  taskName: string;
  /** The decision that holds: this one, or `Canceled` when the run ended before recording it. */
  status: ApprovalStatus;
  decidedBy: string | null;
  reason: string | null;
}

/** The `type` of the failure a decision update is refused with (the API maps each to a status). */
export const decisionRefusals = {
  /** Not an approval the run asked for (or not one at all). */
  unknown: 'ApprovalNotFound',
  /** Decided already, or being decided. */
  decided: 'ApprovalNotPending',
  /** The run is ending: its approvals still Pending are canceled. */
  ending: 'ExecutionEnding',
  /** The update's input is not a decision. */
  invalid: 'InvalidDecision',
} as const;

/** What the workflow returns when the run is over. */
export interface ExecutionOutcome {
  executionId: string;
  status: Extract<ExecutionStatus, 'Completed' | 'Failed' | 'Canceled'>;
  message: string;
}

/** What a task's log says of the decision on its approval: `Approved by alice: looks right`. */
export function decisionMessage(
  approved: boolean,
  decidedBy: string,
  reason: string | null | undefined,
): string {
  return `${approved ? 'Approved' : 'Rejected'} by ${decidedBy}${reason ? `: ${reason}` : '.'}`;
}

/** Stops the run: in-flight plugins are aborted, pending tasks become Canceled. */
export const cancelSignal = defineSignal<[CancelSignal?]>('cancel');
/** The message of a task whose plugin was running when the run was canceled. */
export const canceledWhileRunning = 'Canceled while running.';
/** A person approved a pending approval (the API recorded the decision first, with the reason). */
export const approveSignal = defineSignal<[ApproveSignal]>('approve');
/** A person rejected a pending approval: the task fails with the reason. */
export const rejectSignal = defineSignal<[RejectSignal]>('reject');
/** The run's live state. */
export const stateQuery = defineQuery<ExecutionState>('state');
/** The approvals the run waits for, with their ids. */
export const pendingApprovalsQuery = defineQuery<PendingApproval[]>('pendingApprovals');
/**
 * Approves a pending approval and answers once the decision is recorded. Runs started before
 * updates existed have no handler for it (the API then records the decision and signals).
 */
export const approveUpdate = defineUpdate<DecisionResult, [DecisionUpdate]>('approve');
/** Rejects a pending approval: the task fails with the reason. */
export const rejectUpdate = defineUpdate<DecisionResult, [DecisionUpdate]>('reject');
