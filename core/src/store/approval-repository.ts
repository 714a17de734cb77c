import { sql, type Kysely } from 'kysely';
import { Conflict, NotFound } from '#definition/errors.js';
import { isUuid, newId } from './ids.js';
import { paginate, type Page, type Paged } from './paging.js';
import { storableText } from '#definition/storable-text.js';
import type { Approvers, InputDeclaration } from '#definition/types.js';
import type {
  ApprovalRow,
  ApprovalStatus,
  ApprovalTimeoutAction,
  Database,
  DecisionChannel,
  ExecutionStatus,
} from './tables.js';

/**
 * Approvals: a task that waits for a person asks for one (once, however often the engine asks),
 * and the first decision recorded is the one that counts — a person's through the API, the
 * system's when the approval times out, or `Canceled` when its execution ends first. Every write
 * goes through the approval table, so anything that watches it sees every change.
 */

/** Who decides an approval that times out, or closes one whose execution ended. */
export const systemDecider = 'system';
/** Who decided an approval through a signal sent to the run from Temporal directly. */
export const temporalDecider = 'temporal';

/** An approval with the workflow its execution belongs to, and who started that. */
export type ApprovalView = ApprovalRow & { workflowId: string; startedBy: string | null };

/** A decision: the approval moves from Pending to one of these. */
export type Decision = Extract<ApprovalStatus, 'Approved' | 'Rejected'>;

/**
 * Asks for an approval of a task; idempotent: the task's existing approval is returned. A run
 * reset from Temporal (`run`) asks again: the approval an earlier run asked for is Pending again,
 * under the same id, without its decision.
 */
export async function createApproval(
  db: Kysely<Database>,
  input: {
    executionId: string;
    taskExecutionId: string;
    taskName: string;
    comment: string;
    /** Applied `milliseconds` after the request unless someone decides first. */
    timeout?: { milliseconds: number; onTimeout: ApprovalTimeoutAction };
    at?: Date;
    /** The reset run that asks (see `RunWriter` in execution-repository.ts). */
    run?: string | undefined;
    /** `manualApproval.inputs` and `manualApproval.approvers`, as declared. */
    form?: Record<string, InputDeclaration> | undefined;
    approvers?: Approvers | undefined;
  },
): Promise<ApprovalRow> {
  const requestedAt = input.at ?? new Date();
  const timesOutAt = input.timeout
    ? new Date(requestedAt.getTime() + input.timeout.milliseconds)
    : null;
  const inserted = await db
    .insertInto('approval')
    .values({
      id: newId(),
      executionId: input.executionId,
      taskExecutionId: input.taskExecutionId,
      taskName: input.taskName,
      comment: input.comment,
      status: 'Pending',
      requestedAt,
      timesOutAt,
      onTimeout: input.timeout?.onTimeout ?? null,
      temporalRunId: input.run ?? null,
      form: input.form ? JSON.stringify(input.form) : null,
      approvers: input.approvers ? JSON.stringify(input.approvers) : null,
    })
    .onConflict((oc) =>
      input.run === undefined
        ? oc.column('taskExecutionId').doNothing()
        : oc
            .column('taskExecutionId')
            .doUpdateSet({
              comment: input.comment,
              status: 'Pending',
              requestedAt,
              timesOutAt,
              onTimeout: input.timeout?.onTimeout ?? null,
              decidedAt: null,
              decidedBy: null,
              reason: null,
              inputs: null,
              decidedVia: null,
              decidedViaNotification: null,
              temporalRunId: input.run,
            })
            .where('approval.temporalRunId', 'is distinct from', input.run),
    )
    .returningAll()
    .executeTakeFirst();
  if (inserted) return inserted;
  return db
    .selectFrom('approval')
    .selectAll()
    .where('taskExecutionId', '=', input.taskExecutionId)
    .executeTakeFirstOrThrow();
}

/** Approvals with their execution's workflow id. */
function approvalViews(db: Kysely<Database>) {
  return db
    .selectFrom('approval')
    .innerJoin('workflowExecution', 'workflowExecution.id', 'approval.executionId')
    .selectAll('approval')
    .select(['workflowExecution.workflowId', 'workflowExecution.startedBy']);
}

/** An execution's approvals, oldest first. */
export async function listApprovals(
  db: Kysely<Database>,
  executionId: string,
  page?: Page,
): Promise<Paged<ApprovalView>> {
  const query = approvalViews(db)
    .where('approval.executionId', '=', executionId)
    .orderBy('approval.requestedAt')
    .orderBy('approval.id');
  return paginate(query, page);
}

/** Approvals of every workflow (or one), oldest request first, optionally in one status. */
export async function listAllApprovals(
  db: Kysely<Database>,
  filter: { projectId?: string; status?: ApprovalStatus; workflowId?: string; page?: Page },
): Promise<Paged<ApprovalView>> {
  const query = approvalViews(db)
    .$if(filter.projectId !== undefined, (q) =>
      q.where('workflowExecution.projectId', '=', filter.projectId!),
    )
    .$if(filter.status !== undefined, (q) => q.where('approval.status', '=', filter.status!))
    .$if(filter.workflowId !== undefined, (q) =>
      q.where('workflowExecution.workflowId', '=', filter.workflowId!),
    )
    .orderBy('approval.requestedAt')
    .orderBy('approval.id');
  return paginate(query, filter.page);
}

interface DecisionInput {
  executionId: string;
  approvalId: string;
  decision: Decision;
  decidedBy: string;
  /** Why; blank counts as none. */
  reason?: string | undefined;
  /** The values given with an approval (validated against `manualApproval.inputs`). */
  inputs?: Record<string, unknown> | undefined;
  /** How it was decided. */
  via?: DecisionChannel | undefined;
  /** The notification event whose approval link decided it. */
  notification?: string | undefined;
  at?: Date;
}

/** Decides the approval if it is still Pending; undefined when it is not (or is not the execution's). */
async function decideIfPending(
  db: Kysely<Database>,
  input: DecisionInput,
): Promise<ApprovalRow | undefined> {
  if (!isUuid(input.approvalId)) return undefined;
  const reason = input.reason?.trim() ? storableText(input.reason.trim()) : null;
  return db
    .updateTable('approval')
    .set({
      status: input.decision,
      decidedBy: input.decidedBy,
      decidedAt: input.at ?? new Date(),
      reason,
      inputs: input.inputs !== undefined ? JSON.stringify(input.inputs) : null,
      decidedVia: input.via ?? null,
      decidedViaNotification: input.notification ?? null,
    })
    .where('id', '=', input.approvalId)
    .where('executionId', '=', input.executionId)
    .where('status', '=', 'Pending')
    .returningAll()
    .executeTakeFirst();
}

function approvalNotFound(executionId: string, approvalId: string) {
  return new NotFound(`Approval ${approvalId} was not found in execution ${executionId}.`, {
    code: 'approval.not_found',
  });
}

/**
 * Records a person's decision exactly once: only a Pending approval changes. `NotFound` when the
 * approval is not one of the execution's; `Conflict` when it is no longer Pending.
 */
export async function decideApproval(
  db: Kysely<Database>,
  input: DecisionInput,
): Promise<ApprovalRow> {
  const decided = await decideIfPending(db, input);
  if (decided) return decided;
  const existing = await findApproval(db, input.executionId, input.approvalId);
  if (!existing) throw approvalNotFound(input.executionId, input.approvalId);
  throw notPending(existing);
}

/**
 * The engine's side of a decision (a signal, a timeout): records it when the approval is still
 * Pending, and returns the approval as it then stands, so that the run acts on the decision that
 * was recorded first, whoever made it. Undefined when the approval is not the execution's.
 */
export async function settleDecision(
  db: Kysely<Database>,
  input: DecisionInput,
): Promise<ApprovalRow | undefined> {
  return (
    (await decideIfPending(db, input)) ??
    (await findApproval(db, input.executionId, input.approvalId))
  );
}

/** An approval of an execution; undefined when unknown or another execution's. */
export async function findApproval(
  db: Kysely<Database>,
  executionId: string,
  approvalId: string,
): Promise<ApprovalRow | undefined> {
  if (!isUuid(approvalId)) return undefined;
  return db
    .selectFrom('approval')
    .selectAll()
    .where('id', '=', approvalId)
    .where('executionId', '=', executionId)
    .executeTakeFirst();
}

/** The `Conflict` of deciding an approval that is no longer Pending. */
export function notPending(approval: Pick<ApprovalRow, 'id' | 'status'>) {
  if (approval.status === 'Canceled') {
    return new Conflict(
      `Approval ${approval.id} was canceled: its execution ended before a decision.`,
      { code: 'approval.canceled' },
    );
  }
  return new Conflict(`Approval ${approval.id} was already ${approval.status.toLowerCase()}.`, {
    code: 'approval.already_decided',
  });
}

const undeliveredReason = 'The execution ended before the decision reached it.';

/**
 * Puts a decision back to Pending because it could not be delivered to the run; Canceled instead
 * when the execution has ended meanwhile (its end closed only the approvals still Pending).
 */
export async function undoApprovalDecision(
  db: Kysely<Database>,
  approvalId: string,
): Promise<void> {
  const ended = sql<boolean>`not exists (
    select 1 from workflow_execution e
    where e.id = approval.execution_id and e.status in ('Pending', 'Running', 'Paused'))`;
  await db
    .updateTable('approval')
    .set({
      status: sql`case when ${ended} then 'Canceled' else 'Pending' end`,
      decidedBy: sql`case when ${ended} then ${systemDecider} end`,
      decidedAt: sql`case when ${ended} then now() end`,
      reason: sql`case when ${ended} then ${undeliveredReason} end`,
      decidedVia: sql`case when ${ended} then 'System' end`,
      decidedViaNotification: null,
      inputs: null,
    })
    .where('id', '=', approvalId)
    .execute();
}

/** Why an approval was closed when its execution ended with `status` and `message`. */
export function closedReason(status: ExecutionStatus, message: string): string {
  const ended = status === 'Canceled' ? 'was canceled' : status === 'Failed' ? 'failed' : 'ended';
  return storableText(`The execution ${ended} before a decision: ${message}`);
}

/** What an approval still Pending becomes when its execution ends. */
export function closedApproval(outcome: { status: ExecutionStatus; message: string; at: Date }) {
  return {
    status: 'Canceled' as const,
    decidedBy: systemDecider,
    decidedAt: outcome.at,
    reason: closedReason(outcome.status, outcome.message),
    decidedVia: 'System' as const,
  };
}

/** Cancels the approvals of an ended execution that are still Pending. */
export async function cancelPendingApprovals(
  db: Kysely<Database>,
  executionId: string,
  outcome: { status: ExecutionStatus; message: string; at: Date },
): Promise<void> {
  await db
    .updateTable('approval')
    .set(closedApproval(outcome))
    .where('executionId', '=', executionId)
    .where('status', '=', 'Pending')
    .execute();
}

/**
 * Approvals a person still has to decide, across every execution that can still go on, by the
 * name of their project, every project included (the `trellis_approvals_waiting` gauge, read at
 * each scrape).
 */
export async function countWaitingApprovals(
  db: Kysely<Database>,
): Promise<{ project: string; waiting: number }[]> {
  const rows = await db
    .selectFrom('project as p')
    .leftJoin('workflowExecution as e', (join) =>
      join.onRef('e.projectId', '=', 'p.id').on('e.status', 'in', ['Pending', 'Running', 'Paused']),
    )
    .leftJoin('approval as a', (join) =>
      join.onRef('a.executionId', '=', 'e.id').on('a.status', '=', 'Pending'),
    )
    .select(({ fn }) => ['p.name as project', fn.count<string>('a.id').as('waiting')])
    .groupBy('p.name')
    .execute();
  return rows.map(({ project, waiting }) => ({ project, waiting: Number(waiting) }));
}

/** What `Approval('Task')` and `Approval()` read: the decision on a task's approval. */
export interface DecisionView {
  status: ApprovalStatus;
  decidedBy: string | null;
  decidedAt: string | null;
  reason: string | null;
  inputs: Record<string, unknown>;
}

/** The decisions on the approvals of an execution's tasks, by task name (those asked for). */
export async function decisionsByTask(
  db: Kysely<Database>,
  executionId: string,
  taskNames: readonly string[],
): Promise<Record<string, DecisionView>> {
  if (taskNames.length === 0) return {};
  const rows = await db
    .selectFrom('approval')
    .select(['taskName', 'status', 'decidedBy', 'decidedAt', 'reason', 'inputs'])
    .where('executionId', '=', executionId)
    .where('taskName', 'in', [...taskNames])
    .execute();
  const decisions: Record<string, DecisionView> = {};
  for (const row of rows) {
    decisions[row.taskName] = {
      status: row.status,
      decidedBy: row.decidedBy,
      decidedAt: row.decidedAt?.toISOString() ?? null,
      reason: row.reason,
      inputs: row.inputs ?? {},
    };
  }
  return decisions;
}

/** An approval by its id alone (an approval link names only that), with its workflow's name. */
export async function findApprovalById(
  db: Kysely<Database>,
  approvalId: string,
): Promise<(ApprovalView & { workflowName: string }) | undefined> {
  if (!isUuid(approvalId)) return undefined;
  return approvalViews(db)
    .select('workflowExecution.workflowName')
    .where('approval.id', '=', approvalId)
    .executeTakeFirst();
}
