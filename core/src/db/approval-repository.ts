import type { Kysely } from 'kysely';
import { Conflict, NotFound } from '../errors.js';
import { isUuid, newId } from './ids.js';
import { paginate, type Page, type Paged } from './paging.js';
import type { ApprovalRow, ApprovalStatus, Database } from './tables.js';

/**
 * Approvals: a task that waits for a person asks for one (once, however often the engine asks),
 * and the first decision recorded is the one that counts.
 */

/** Asks for an approval of a task; idempotent: the task's existing approval is returned. */
export async function createApproval(
  db: Kysely<Database>,
  input: {
    executionId: string;
    taskExecutionId: string;
    taskName: string;
    comment: string;
    at?: Date;
  },
): Promise<ApprovalRow> {
  const inserted = await db
    .insertInto('approval')
    .values({
      id: newId(),
      executionId: input.executionId,
      taskExecutionId: input.taskExecutionId,
      taskName: input.taskName,
      comment: input.comment,
      status: 'Pending',
      requestedAt: input.at ?? new Date(),
    })
    .onConflict((oc) => oc.column('taskExecutionId').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return inserted;
  return db
    .selectFrom('approval')
    .selectAll()
    .where('taskExecutionId', '=', input.taskExecutionId)
    .executeTakeFirstOrThrow();
}

/** An execution's approvals, oldest first. */
export async function listApprovals(
  db: Kysely<Database>,
  executionId: string,
  page?: Page,
): Promise<Paged<ApprovalRow>> {
  const query = db
    .selectFrom('approval')
    .selectAll()
    .where('executionId', '=', executionId)
    .orderBy('requestedAt')
    .orderBy('id');
  return paginate(query, page);
}

/**
 * Records a decision exactly once: only a Pending approval changes. `NotFound` when the approval
 * is not one of the execution's; `Conflict` when it was decided already.
 */
export async function decideApproval(
  db: Kysely<Database>,
  input: {
    executionId: string;
    approvalId: string;
    decision: Exclude<ApprovalStatus, 'Pending'>;
    decidedBy: string;
    at?: Date;
  },
): Promise<ApprovalRow> {
  const missing = () =>
    new NotFound(`Approval ${input.approvalId} was not found in execution ${input.executionId}.`, {
      code: 'approval.not_found',
    });
  if (!isUuid(input.approvalId)) throw missing();
  const decided = await db
    .updateTable('approval')
    .set({ status: input.decision, decidedBy: input.decidedBy, decidedAt: input.at ?? new Date() })
    .where('id', '=', input.approvalId)
    .where('executionId', '=', input.executionId)
    .where('status', '=', 'Pending')
    .returningAll()
    .executeTakeFirst();
  if (decided) return decided;
  const existing = await findApproval(db, input.executionId, input.approvalId);
  if (!existing) throw missing();
  throw alreadyDecided(existing);
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

/** The `Conflict` of deciding an approval that was decided already. */
export function alreadyDecided(approval: Pick<ApprovalRow, 'id' | 'status'>) {
  return new Conflict(`Approval ${approval.id} was already ${approval.status.toLowerCase()}.`, {
    code: 'approval.already_decided',
  });
}

/** Puts a decision back to Pending (the decision could not be delivered to the run). */
export async function undoApprovalDecision(
  db: Kysely<Database>,
  approvalId: string,
): Promise<void> {
  await db
    .updateTable('approval')
    .set({ status: 'Pending', decidedBy: null, decidedAt: null })
    .where('id', '=', approvalId)
    .execute();
}

/**
 * Approvals a person still has to decide, across every execution that can still go on (the
 * `trellis_approvals_waiting` gauge, read at each scrape).
 */
export async function countWaitingApprovals(db: Kysely<Database>): Promise<number> {
  const { count } = await db
    .selectFrom('approval as a')
    .innerJoin('workflowExecution as e', 'e.id', 'a.executionId')
    .select(({ fn }) => fn.countAll<string>().as('count'))
    .where('a.status', '=', 'Pending')
    .where('e.status', 'in', ['Pending', 'Running', 'Paused'])
    .executeTakeFirstOrThrow();
  return Number(count);
}
