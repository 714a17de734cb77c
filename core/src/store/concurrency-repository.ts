/**
 * The slots and queue of `configuration.concurrency` (issue 14). PostgreSQL is the arbiter:
 * every admission of a (workflow, key) runs in a transaction that first takes an advisory lock of
 * that pair, so processes anywhere decide one after the other on what is committed; nothing is
 * held in memory. A slot is released by the statement that records its execution's end (a
 * trigger, see the migration), so an execution never holds a slot past its end.
 */
import { sql, type Kysely } from 'kysely';
import type { ConcurrencyOnLimit } from '#definition/types.js';
import { cancelUnfinishedTasks } from './task-execution-repository.js';
import { markExecutionFinished, type ChangedExecution } from './execution-repository.js';
import type { NewLogEntry } from './log-repository.js';
import type { Database, ExecutionStatus } from './tables.js';
import { storableText } from '#definition/storable-text.js';

/**
 * Whose slots: a workflow's key (`configuration.concurrency`), or a project's running-at-once
 * limit (`workflowId` is then the project's id, `key` empty, and `describedAs` names it).
 */
export interface SlotOwner {
  workflowId: string;
  key: string;
  /** What the slots are of, in messages (`project "partner-a" (limits.runningExecutions)`). */
  describedAs?: string;
}

/** What an execution asks for: a slot of its owner under `limit`. */
export interface SlotRequest extends SlotOwner {
  executionId: string;
  limit: number;
  onLimit: ConcurrencyOnLimit;
  at?: Date;
}

/** An execution to cancel so that a newer one gets its slot (`onLimit: CancelOldest`). */
export interface Preemption {
  executionId: string;
  temporalWorkflowId: string;
}

export type Admission =
  /** The execution holds a slot: it may run. `waited` when it was queued before. */
  | { outcome: 'admitted'; waited: boolean }
  /**
   * It waits in line, Pending, with `message` saying for what; cancel `preempt` first. `joined`:
   * it joined the line now (not asked again while in it).
   */
  | { outcome: 'queued'; message: string; preempt: Preemption[]; joined: boolean }
  /** It ended (CancelNew, Fail), or had ended before it asked. */
  | {
      outcome: 'ended';
      status: Extract<ExecutionStatus, 'Completed' | 'Failed' | 'Canceled'>;
      message: string;
      ended?: ChangedExecution;
    };

interface SlotView {
  executionId: string;
  holding: boolean;
  preempted: boolean;
  slotLimit: number;
  temporalWorkflowId: string;
}

/** Serializes the decisions of one (workflow, key) until the transaction ends. */
async function lockKey(trx: Kysely<Database>, workflowId: string, key: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`concurrency:${workflowId}:${key}`}, 0))`.execute(
    trx,
  );
}

async function slotsOf(trx: Kysely<Database>, workflowId: string, key: string) {
  return trx
    .selectFrom('concurrencySlot as s')
    .innerJoin('workflowExecution as e', 'e.id', 's.executionId')
    .select([
      's.executionId',
      's.holding',
      's.preempted',
      's.slotLimit',
      'e.temporalWorkflowId',
      's.heldAt',
      's.seq',
    ])
    .where('s.workflowId', '=', workflowId)
    .where('s.key', '=', key)
    .orderBy('s.seq')
    .execute();
}

type SlotLimit = Pick<SlotRequest, 'key' | 'describedAs' | 'limit'>;

/** "1 of 1 taken for key 'acme' by execution X" */
function taken(request: SlotLimit, holders: SlotView[]): string {
  const ids = holders.map((slot) => slot.executionId);
  const by =
    ids.length === 0 ? '' : ` by execution${ids.length === 1 ? '' : 's'} ${ids.join(', ')}`;
  const of =
    request.describedAs !== undefined
      ? ` of ${request.describedAs}`
      : request.key !== ''
        ? ` for key '${request.key}'`
        : '';
  return `${holders.length} of ${request.limit} taken${of}${by}`;
}

/** What an execution in line waits for: the slots' holders, and how many are ahead of it. */
function waitingMessage(request: SlotLimit, holders: SlotView[], position: number): string {
  const ahead = position > 0 ? `; ${position} ahead in the queue` : '';
  return `Waiting for a concurrency slot: ${taken(request, holders)}${ahead}.`;
}

/**
 * Decides whether the execution may run now (DESIGN: at most `limit` executions of a key are
 * Running or Paused): it takes a free slot when no one waits ahead of it, or per `onLimit` waits
 * in line (Queue, CancelOldest) or ends at once (CancelNew, Fail). Asked again by a waiting
 * execution, it takes a slot once one is free and it is first in line. Idempotent.
 */
export async function admit(db: Kysely<Database>, request: SlotRequest): Promise<Admission> {
  const at = request.at ?? new Date();
  return db.transaction().execute(async (trx) => {
    await lockKey(trx, request.workflowId, request.key);
    const execution = await trx
      .selectFrom('workflowExecution')
      .select(['status', 'message'])
      .where('id', '=', request.executionId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (!['Pending', 'Running', 'Paused'].includes(execution.status)) {
      return {
        outcome: 'ended',
        status: execution.status as 'Completed' | 'Failed' | 'Canceled',
        message: execution.message || `Execution is ${execution.status}.`,
      };
    }
    const slots = await slotsOf(trx, request.workflowId, request.key);
    const mine = slots.find((slot) => slot.executionId === request.executionId);
    if (mine?.holding) return { outcome: 'admitted', waited: false };
    const holders = slots.filter((slot) => slot.holding);
    const line = slots.filter((slot) => !slot.holding && !slot.preempted);
    const take = async () => {
      if (mine) {
        await trx
          .updateTable('concurrencySlot')
          .set({ holding: true, heldAt: at })
          .where('executionId', '=', request.executionId)
          .where('workflowId', '=', request.workflowId)
          .execute();
        // Those behind it now wait for it too.
        const rest = line.filter((slot) => slot !== mine);
        await refreshLine(trx, request, [...holders, { ...mine, holding: true }], rest);
      } else {
        await insertSlot(trx, request, { holding: true, at });
      }
      await setMessage(trx, request.executionId, '');
      return { outcome: 'admitted' as const, waited: mine !== undefined };
    };
    // Already running (a run reset from Temporal, or one started before limits): it holds a slot.
    if (execution.status !== 'Pending' && !mine) return take();
    const free = request.limit - holders.length;
    if (mine?.preempted) {
      const message = `Canceled to free a concurrency slot for a newer execution (${taken(request, holders)}; onLimit CancelOldest).`;
      return { outcome: 'queued', message, preempt: [], joined: false };
    }
    const position = mine ? line.indexOf(mine) : line.length;
    if (position < free) return take();
    if (mine) {
      const message = waitingMessage(request, holders, position);
      await setMessage(trx, request.executionId, message);
      return { outcome: 'queued', message, preempt: [], joined: false };
    }
    switch (request.onLimit) {
      case 'CancelNew':
      case 'Fail': {
        const status = request.onLimit === 'Fail' ? 'Failed' : 'Canceled';
        const message = `${status}: the concurrency limit is reached (${taken(request, holders)}; onLimit ${request.onLimit}).`;
        const ended = await finishWaiting(trx, request.executionId, { status, message, at });
        return { outcome: 'ended', status, message, ...(ended ? { ended } : {}) };
      }
      case 'CancelOldest': {
        // Newest wins: enough of the oldest claims (holders first, then those in line) are
        // canceled that the new execution is next once they have ended.
        const claims = [
          ...holders.filter((slot) => !slot.preempted),
          ...line.filter((slot) => !slot.holding),
        ];
        const victims = claims.slice(0, Math.max(0, claims.length - request.limit + 1));
        if (victims.length > 0) {
          await trx
            .updateTable('concurrencySlot')
            .set({ preempted: true })
            .where(
              'executionId',
              'in',
              victims.map((slot) => slot.executionId),
            )
            .execute();
        }
        await insertSlot(trx, request, { holding: false, at });
        const names = victims.map((slot) => slot.executionId).join(', ');
        const message = `Waiting for a concurrency slot: ${taken(request, holders)}${names ? `; canceling ${names} to free one` : ''} (onLimit CancelOldest).`;
        await setMessage(trx, request.executionId, message);
        return {
          outcome: 'queued',
          message,
          joined: true,
          preempt: victims.map(({ executionId, temporalWorkflowId }) => ({
            executionId,
            temporalWorkflowId,
          })),
        };
      }
      case 'Queue': {
        await insertSlot(trx, request, { holding: false, at });
        const message = waitingMessage(request, holders, position);
        await setMessage(trx, request.executionId, message);
        return { outcome: 'queued', message, preempt: [], joined: true };
      }
    }
  });
}

async function insertSlot(
  trx: Kysely<Database>,
  request: SlotRequest,
  slot: { holding: boolean; at: Date },
): Promise<void> {
  await trx
    .insertInto('concurrencySlot')
    .values({
      executionId: request.executionId,
      workflowId: request.workflowId,
      key: request.key,
      slotLimit: request.limit,
      holding: slot.holding,
      queuedAt: slot.at,
      heldAt: slot.holding ? slot.at : null,
    })
    .execute();
}

async function setMessage(trx: Kysely<Database>, executionId: string, message: string) {
  await trx
    .updateTable('workflowExecution')
    .set({ message: storableText(message) })
    .where('id', '=', executionId)
    .where('status', 'in', ['Pending', 'Running', 'Paused'])
    .where('message', '<>', message)
    .execute();
}

/**
 * Ends an execution that never ran (refused by its limit, or canceled while it waited in line):
 * its status and message, its tasks Canceled, a log entry; its place in line goes with its end.
 * Undefined when it had already ended.
 */
export async function finishWaiting(
  db: Kysely<Database>,
  executionId: string,
  outcome: { status: 'Failed' | 'Canceled'; message: string; at: Date },
): Promise<ChangedExecution | undefined> {
  const finish = async (trx: Kysely<Database>) => {
    const log: NewLogEntry = {
      executionId,
      taskExecutionId: null,
      dedupeKey: 'concurrency:ended',
      level: outcome.status === 'Failed' ? 'Error' : 'Warning',
      message: outcome.message,
      timeStamp: outcome.at,
    };
    const ended = await markExecutionFinished(trx, executionId, outcome, [log]);
    if (ended) {
      await cancelUnfinishedTasks(trx, executionId, {
        message: `Canceled: the execution ended before it ran (${outcome.message})`,
        at: outcome.at,
      });
    }
    return ended;
  };
  return db.isTransaction ? finish(db) : db.transaction().execute(finish);
}

/** Says again what each execution in `line` waits for, in one statement. */
async function refreshLine(
  trx: Kysely<Database>,
  owner: SlotOwner,
  holders: SlotView[],
  line: SlotView[],
): Promise<void> {
  if (line.length === 0) return;
  const values = sql.join(
    line.map((slot, position) => {
      const message = waitingMessage({ ...owner, limit: slot.slotLimit }, holders, position);
      return sql`(${slot.executionId}::uuid, ${storableText(message)})`;
    }),
  );
  await sql`
    update workflow_execution e set message = v.message
    from (values ${values}) as v(id, message)
    where e.id = v.id and e.status = 'Pending' and e.message <> v.message`.execute(trx);
}

/**
 * Once a slot of its owner may have freed, or a place in line: says again what each execution
 * in line waits for, and returns those to wake, first in line, as many as there are free slots.
 * Taken under the owner's lock, so an admission under way is seen.
 */
export async function nextInLine(db: Kysely<Database>, owner: SlotOwner): Promise<Preemption[]> {
  const { workflowId, key } = owner;
  return db.transaction().execute(async (trx) => {
    await lockKey(trx, workflowId, key);
    const slots = await slotsOf(trx, workflowId, key);
    const holders = slots.filter((slot) => slot.holding);
    const line = slots.filter((slot) => !slot.holding && !slot.preempted);
    await refreshLine(trx, owner, holders, line);
    const limit = line[0]?.slotLimit ?? 0;
    return line
      .slice(0, Math.max(0, limit - holders.length))
      .map(({ executionId, temporalWorkflowId }) => ({ executionId, temporalWorkflowId }));
  });
}
