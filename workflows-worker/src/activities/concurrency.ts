/**
 * The activities' side of `configuration.concurrency` (issue 14): the admission a run passes
 * before it is marked Running (in `prepareExecution`), what a run that waited in line records
 * when it is canceled there, and who is next in line once a slot may have freed. The decisions
 * are PostgreSQL's (core/src/store/concurrency-repository.ts).
 */
import * as concurrencyRepository from '#store/concurrency-repository.js';
import type { Preemption, SlotOwner, SlotRequest } from '#store/concurrency-repository.js';
import { appendLogs } from '#store/log-repository.js';
import type { WorkflowExecutionRow } from '#store/tables.js';
import { concurrencyKey } from '#definition/concurrency.js';
import { finishExecution } from '#application/executions/finish-execution.js';
import { projectLimits } from '#application/projects/fair-shares.js';
import type { DefinitionCache } from './definitions.js';
import type { EngineDeps } from './deps.js';

export type { Preemption } from '#store/concurrency-repository.js';

/**
 * The slots a run holds or waits for: its workflow's key, or its project's running-at-once limit
 * (`describedAs` names it), and `also` the workflow's key it holds while it waits for the
 * project's (both are released when the run ends, so the runs first in each line are woken).
 */
export interface SlotKey extends SlotOwner {
  also?: SlotKey;
}

/** A run waiting in line: what it waits for, and whom it cancels first (CancelOldest). */
export interface Waiting {
  message: string;
  preempt: Preemption[];
  slot: SlotKey;
}

/** The admission's answer, in `prepareExecution`'s words. */
export type AdmissionResult =
  | { ok: true; slot?: SlotKey }
  | { ok: false; executionId: string; message: string; queued: Waiting }
  | {
      ok: false;
      executionId: string;
      message: string;
      status: 'Completed' | 'Failed' | 'Canceled';
    };

/** The most characters a key may have: keys are compared and shown in messages. */
export const MAX_KEY_LENGTH = 500;

/**
 * Passes an execution through its definition's concurrency limit, then its project's
 * running-at-once limit (a subworkflow child runs within its parent's); a limit not set passes.
 * Logs when it starts waiting and when it gets its slot after waiting.
 */
export async function admitExecution(
  deps: EngineDeps,
  definitions: DefinitionCache,
  execution: WorkflowExecutionRow,
): Promise<AdmissionResult> {
  const ofWorkflow = await admitToWorkflowLimit(deps, definitions, execution);
  if (!ofWorkflow.ok || execution.parentExecutionId !== null) return ofWorkflow;
  const limits = await projectLimits(deps.db, execution.projectId, deps.config.Projects.Limits);
  if (limits.runningExecutions === 0) return ofWorkflow;
  const held = ofWorkflow.slot ? { also: ofWorkflow.slot } : {};
  const ofProject = await admitToSlot(deps, execution, {
    workflowId: execution.projectId,
    key: '',
    describedAs: `project "${limits.projectName}" (limits.runningExecutions)`,
    limit: limits.runningExecutions,
    onLimit: 'Queue',
  });
  if (ofProject.ok) return { ok: true, slot: { ...ofProject.slot, ...held } };
  if (!('queued' in ofProject)) return ofProject;
  return {
    ...ofProject,
    queued: { ...ofProject.queued, slot: { ...ofProject.queued.slot, ...held } },
  };
}

async function admitToWorkflowLimit(
  deps: EngineDeps,
  definitions: DefinitionCache,
  execution: WorkflowExecutionRow,
): Promise<AdmissionResult> {
  const loaded = await definitions.of(execution);
  const concurrency = loaded.definition.configuration?.concurrency;
  if (concurrency === undefined) return { ok: true };
  let key: string;
  try {
    key = concurrencyKey(concurrency, execution.inputs);
    if (key.length > MAX_KEY_LENGTH) {
      throw new Error(`it is ${key.length} characters long; at most ${MAX_KEY_LENGTH} are allowed`);
    }
  } catch (error) {
    const message = `Failed: the concurrency key (configuration.concurrency.key) could not be taken: ${(error as Error).message}`;
    const at = new Date();
    await finishExecution(deps, execution.id, { by: 'waiting', status: 'Failed', message, at });
    return { ok: false, executionId: execution.id, message, status: 'Failed' };
  }
  return admitToSlot(deps, execution, {
    workflowId: execution.workflowId,
    key,
    limit: concurrency.limit,
    onLimit: concurrency.onLimit,
  });
}

/** Takes a slot of `owner` for the execution, or its place in line, or ends it per `onLimit`. */
async function admitToSlot(
  deps: EngineDeps,
  execution: WorkflowExecutionRow,
  owner: Omit<SlotRequest, 'executionId' | 'at'>,
): Promise<Exclude<AdmissionResult, { ok: true }> | { ok: true; slot: SlotKey }> {
  const { db, logger } = deps;
  const at = new Date();
  const { workflowId, key, describedAs } = owner;
  const slot: SlotKey = { workflowId, key, ...(describedAs ? { describedAs } : {}) };
  const admission = await concurrencyRepository.admit(db, {
    ...owner,
    executionId: execution.id,
    at,
  });
  const context = { executionId: execution.id, workflowId: execution.workflowId, key, describedAs };
  // The log entries of a project's slot have keys of their own: a run may wait for both.
  const logKey = describedAs ? 'project-slot' : 'concurrency';
  switch (admission.outcome) {
    case 'admitted':
      if (admission.waited) {
        logger.info(context, 'execution got a concurrency slot after waiting');
        const got = describedAs ? `Got a slot of ${describedAs}.` : 'Got a concurrency slot.';
        await log(deps, execution.id, `${logKey}:admitted`, 'Info', got, at);
      }
      return { ok: true, slot };
    case 'queued':
      if (admission.joined) {
        logger.info(
          { ...context, preempt: admission.preempt.map((victim) => victim.executionId) },
          'execution waits for a concurrency slot',
        );
      } else {
        // Asked again while in line (woken, or its timer): nothing new to say.
        logger.debug(context, 'execution still waits for a concurrency slot');
      }
      await log(deps, execution.id, `${logKey}:queued`, 'Info', admission.message, at);
      return {
        ok: false,
        executionId: execution.id,
        message: admission.message,
        queued: { message: admission.message, preempt: admission.preempt, slot },
      };
    case 'ended':
      if (admission.ended) {
        logger.info(
          { ...context, status: admission.status },
          'execution refused by its concurrency limit',
        );
        await finishExecution(deps, execution.id, {
          by: 'recorded',
          status: admission.status,
          message: admission.message,
          at,
          ended: admission.ended,
        });
      }
      return {
        ok: false,
        executionId: execution.id,
        message: admission.message,
        status: admission.status,
      };
  }
}

async function log(
  deps: EngineDeps,
  executionId: string,
  dedupeKey: string,
  level: 'Info' | 'Warning',
  message: string,
  at: Date,
): Promise<void> {
  await appendLogs(deps.db, [
    { executionId, taskExecutionId: null, dedupeKey, level, message, timeStamp: at },
  ]);
}

export interface LeaveInput {
  executionId: string;
  /** Who canceled it, for its message. */
  requestedBy?: string;
}

/** The activities of the concurrency limit, run as local activities by the workflow. */
export function concurrencyActivities(deps: EngineDeps) {
  const { db } = deps;
  return {
    /** Ends a run canceled while it waited in line: Canceled, its place in line given up. */
    async leaveConcurrencyQueue(input: LeaveInput): Promise<{
      status: 'Completed' | 'Failed' | 'Canceled';
      message: string;
    }> {
      const at = new Date();
      const message = `Canceled${input.requestedBy ? ` by ${input.requestedBy}` : ''} while waiting for a concurrency slot.`;
      const ended = await finishExecution(deps, input.executionId, {
        by: 'waiting',
        status: 'Canceled',
        message,
        at,
      });
      if (ended) return { status: 'Canceled', message };
      // It ended meanwhile (its run is the only writer, so hardly): say how.
      const row = await db
        .selectFrom('workflowExecution')
        .select(['status', 'message'])
        .where('id', '=', input.executionId)
        .executeTakeFirst();
      const status =
        row?.status === 'Completed' || row?.status === 'Failed' ? row.status : 'Canceled';
      return { status, message: row?.message || message };
    },

    /** The runs first in line for the free slots (of `also` too): the workflow wakes them. */
    async nextInLine(slot: SlotKey): Promise<Preemption[]> {
      const next = await concurrencyRepository.nextInLine(db, slot);
      if (!slot.also) return next;
      return [...next, ...(await concurrencyRepository.nextInLine(db, slot.also))];
    },
  };
}
