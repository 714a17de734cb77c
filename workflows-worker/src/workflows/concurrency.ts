/**
 * The workflow's side of `configuration.concurrency` (issue 14), under the `concurrency` patch.
 * A run whose admission put it in line waits, Pending, until a run that ends wakes it (a signal
 * from that run's workflow) or a timer says to ask again (so a wake-up that never came only
 * delays it); a cancel while it waits ends it Canceled. A run that held a slot, or waited for
 * one, wakes the next in line once its end is recorded (which freed its slot).
 */
import {
  CancellationScope,
  condition,
  defineSignal,
  getExternalWorkflowHandle,
  isCancellation,
  setHandler,
} from '@temporalio/workflow';
import { cancelSignal } from '#protocol/messages.js';
import type { PrepareResult, Preemption, SlotKey } from '../activities/index.js';
import { bookkeeping } from './bookkeeping.js';
import type { RunVersion } from './run-version.js';

/** Sent by a run that freed a slot (or gave up its place) to the runs first in line. */
export const slotFreedSignal = defineSignal('concurrencySlotFreed');

/** The first re-check of a run in line without a wake-up; then doubling up to the last. */
const RECHECK_FIRST_MS = 5_000;
const RECHECK_MAX_MS = 5 * 60_000;

/** What the run's signal handlers know of a cancel. */
export interface CancelState {
  cancelRequested: boolean;
  cancelRequestedBy: string | undefined;
}

/**
 * Waits while the prepared run is in line for a concurrency slot, preparing it again at each
 * wake-up, until it has its slot (or ended); returns what the last preparation said. A run not
 * in line is returned as it is.
 */
export async function waitForSlot(
  prepared: PrepareResult,
  prepare: () => Promise<PrepareResult>,
  cancel: CancelState,
  version: RunVersion,
): Promise<PrepareResult> {
  if (prepared.ok || prepared.queued === undefined || !version.has('concurrency')) return prepared;
  let woken = false;
  setHandler(slotFreedSignal, () => {
    woken = true;
  });
  let result: PrepareResult = prepared;
  let recheck = RECHECK_FIRST_MS;
  while (!result.ok && result.queued !== undefined) {
    const { executionId } = result;
    const { preempt, slot } = result.queued;
    await CancellationScope.nonCancellable(() => cancelOldest(preempt, executionId));
    let canceled = cancel.cancelRequested;
    if (!canceled) {
      try {
        const signaled = await condition(() => woken || cancel.cancelRequested, recheck, {
          summary: 'Wait for a concurrency slot',
        });
        recheck = signaled ? RECHECK_FIRST_MS : Math.min(recheck * 2, RECHECK_MAX_MS);
      } catch (error) {
        // Temporal's own cancel request (the API sends it after its signal).
        if (!isCancellation(error)) throw error;
        canceled = true;
      }
    }
    if (canceled || cancel.cancelRequested) {
      return CancellationScope.nonCancellable(async () => {
        const ended = await bookkeeping('Leave the concurrency queue').leaveConcurrencyQueue({
          executionId,
          ...(cancel.cancelRequestedBy ? { requestedBy: cancel.cancelRequestedBy } : {}),
        });
        await wakeNextInLine(slot);
        return { ok: false as const, executionId, ...ended };
      });
    }
    woken = false;
    result = await prepare();
  }
  return result;
}

/**
 * Once the run's end is recorded (and its slot with it released): wakes the runs first in line
 * for the slots now free.
 */
export async function releasedSlot(slot: SlotKey | undefined, version: RunVersion): Promise<void> {
  if (slot === undefined || !version.has('concurrency')) return;
  await CancellationScope.nonCancellable(() => wakeNextInLine(slot));
}

async function wakeNextInLine(slot: SlotKey): Promise<void> {
  const next = await bookkeeping('Find the next runs in line').nextInLine(slot);
  await Promise.all(
    next.map((run) =>
      // A run that ended meanwhile cannot be signaled: nothing to wake.
      getExternalWorkflowHandle(run.temporalWorkflowId)
        .signal(slotFreedSignal)
        .catch(() => undefined),
    ),
  );
}

/**
 * `onLimit: CancelOldest`: cancels the runs whose slots this one takes, as the API's cancel
 * does (the signal says who asked, then Temporal's cancel request).
 */
async function cancelOldest(victims: Preemption[], executionId: string): Promise<void> {
  const requestedBy = `execution ${executionId} (concurrency limit, onLimit CancelOldest)`;
  await Promise.all(
    victims.map(async (victim) => {
      const handle = getExternalWorkflowHandle(victim.temporalWorkflowId);
      await handle.signal(cancelSignal, { requestedBy }).catch(() => undefined);
      await handle.cancel().catch(() => undefined);
    }),
  );
}
