/**
 * `trellisExecutionV2` (and `trellisExecution` before it): one Temporal workflow per Trellis
 * execution, interpreting the DAG
 * (docs/ARCHITECTURE.md#scheduling). Deterministic: decisions come from the pure planner, time from
 * Temporal timers, randomness (backoff jitter) from the workflow's seeded `Math.random`; all I/O
 * happens in activities, imported here only as types.
 *
 * History stays small: one activity per task attempt (it records the task's status and logs
 * itself; a local one, a marker, when the task's plugin is quick), one local activity per batch
 * of engine bookkeeping, and no data in payloads — task outputs live in PostgreSQL and the
 * activities resolve expressions against them.
 *
 * Operators read runs in the Temporal UI in Trellis's words (`temporal-ui` patch): the run ends
 * Completed, Failed or Canceled in Temporal as in Trellis, keeps the `TrellisStatus` search
 * attribute current, names the approvals it waits for in its current details, takes decisions as
 * updates, and each activity's summary names the task and attempt it runs.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ExecutionOutcome } from '#protocol/messages.js';
import { TrellisExecutionId, TrellisStatus } from '#protocol/search-attributes.js';
import { bookkeeping } from './bookkeeping.js';
import { waitForSlot, releasedSlot } from './concurrency.js';
import type { ExecutionWorkflow } from './execution-signature.js';
import { MessageHandlers } from './message-handlers.js';
import { ExecutionRun } from './run-loop.js';
import type { PrepareResult } from '../activities/index.js';
import { cleanRun, patchedRun, type RunVersion } from './run-version.js';
import { showStatus, statusIs } from './status-attribute.js';

/** The `type` of the failure a run that ended Failed fails its Temporal workflow with. */
export const executionFailedType = 'ExecutionFailed';

/**
 * How long a run canceled by the `cancel` signal alone waits, once it has recorded its end, for
 * Temporal's own cancel request (the API sends both; the first names who canceled) before it
 * closes as Completed: only a cancel request lets a workflow close as Canceled.
 */
const CANCEL_REQUEST_WAIT = '10 seconds';

/**
 * `trellisExecution`, the first type: its runs ask Temporal for each versioned behaviour where it
 * first matters (patches.ts). Runs started before `trellisExecutionV2` finish on it.
 */
export const trellisExecution: ExecutionWorkflow = async function trellisExecution(input) {
  return runExecution(input, patchedRun);
};

/**
 * `trellisExecutionV2`, what every execution starts as: the same run with every behaviour from
 * its start and no patch marker, its status among its start attributes (upserted only when it
 * changes), and subworkflow children of its own type.
 */
export const trellisExecutionV2: ExecutionWorkflow = async function trellisExecutionV2(input) {
  return runExecution(input, cleanRun);
};

/** The history's length at a run's first workflow task: started, task scheduled, task started. */
const firstTaskLength = 3;

/**
 * A run: prepare (unless the API prepared it), then interpret the DAG until it finishes, is
 * canceled or times out.
 */
async function runExecution(
  input: Parameters<ExecutionWorkflow>[0],
  version: RunVersion,
): Promise<ExecutionOutcome> {
  const root = CancellationScope.current();
  const ui = version.has('temporalUi');
  const run = resetRun();
  const messages = new MessageHandlers(ui);
  // Only the execution, never the prepared run (the activity finds everything itself).
  const toPrepare = 'executionId' in input ? { executionId: input.executionId } : input;
  const prepare = () =>
    bookkeeping('Prepare the execution').prepareExecution(
      run === undefined ? toPrepare : { ...toPrepare, run },
    );
  // A cancel that arrives while the run prepares (the API's, right after it started the run)
  // lets the preparation finish, so that the run records its end as for any other cancel.
  const again = () => (ui ? CancellationScope.nonCancellable(prepare) : prepare());
  // Prepared by the API: the run starts on its tasks. Decided by the input and the history, so
  // a replay decides alike (the run's id, which tells a reset, is not the same in every replay);
  // runs started before it existed prepare themselves. So does a run whose first workflow task
  // is not the first thing in its history: reset to its start from the Temporal UI (it takes the
  // execution over in its prepare), a first try that failed or timed out, a signal before it. A
  // run reset to a later event replays the path its history took up to there.
  const given =
    'executionId' in input && workflowInfo().historyLength === firstTaskLength
      ? input.prepared
      : undefined;
  const first: PrepareResult = given
    ? { ok: true, run: given.run, ...(given.statusAttribute ? { statusAttribute: true } : {}) }
    : await again();
  // A clean run started `Running`: while in line for a slot it says it is not.
  if (version.startedClean && first.statusAttribute === true && waitsInLine(first)) {
    showStatus('Pending');
  }
  // In line for a concurrency slot: waits until the run has it (or ended).
  const prepared = await waitForSlot(first, again, messages, version);
  const executionId = prepared.ok ? prepared.run.executionId : prepared.executionId;
  const statusAttribute = ui && prepared.statusAttribute === true;
  const scheduled = 'scheduled' in input ? [{ key: TrellisExecutionId, value: executionId }] : [];
  if (!ui && scheduled.length > 0) upsertSearchAttributes(scheduled);
  if (!prepared.ok) {
    messages.state = () => ({ executionId, status: 'Failed', tasks: {} });
    if (!ui) return { executionId, status: 'Failed', message: prepared.message };
    const status = prepared.status ?? 'Failed';
    const attributes = [
      ...scheduled,
      ...(statusAttribute && !(version.startedClean && statusIs(status))
        ? [{ key: TrellisStatus, value: status }]
        : []),
    ];
    if (attributes.length > 0) upsertSearchAttributes(attributes);
    return end({ executionId, status, message: prepared.message }, root, false);
  }
  const outcome = await new ExecutionRun(prepared.run, messages, {
    ui,
    statusAttribute,
    run,
    initialAttributes: scheduled,
    version,
    ...(given ? { started: given.started } : {}),
  }).execute();
  await releasedSlot(prepared.slot, version);
  return ui ? end(outcome, root, true) : outcome;
}

/** Whether the prepared run waits in line for a concurrency slot. */
function waitsInLine(prepared: PrepareResult): boolean {
  return !prepared.ok && prepared.queued !== undefined;
}

/**
 * The run's id when an operator reset it from the Temporal UI or CLI (its first event names the
 * run it was reset from): its activities then take the execution over from that run, and what
 * they log is kept apart from its entries. Undefined for every run that was not reset.
 */
function resetRun(): string | undefined {
  const { runId, originalExecutionRunId } = workflowInfo();
  return runId !== originalExecutionRunId ? runId : undefined;
}

/**
 * Closes the Temporal workflow as the run ended in Trellis, once its end is recorded: Completed
 * returns the outcome, Failed fails it (non-retryable, with the Trellis message), Canceled cancels
 * it (only possible once Temporal was asked to cancel it: the API asks, after its signal).
 */
async function end(
  outcome: ExecutionOutcome,
  root: CancellationScope,
  awaitCancel: boolean,
): Promise<ExecutionOutcome> {
  // Not cancellable: a cancel requested by now is what this waits for, not a reason to stop.
  await CancellationScope.nonCancellable(async () => {
    // Decision updates still waiting answer once the run has ended: let them, first.
    await condition(allHandlersFinished);
    if (outcome.status === 'Canceled' && awaitCancel && !root.consideredCancelled) {
      await condition(() => root.consideredCancelled, CANCEL_REQUEST_WAIT, {
        summary: 'Wait for Temporal to confirm the cancel',
      });
    }
  });
  if (outcome.status === 'Failed') {
    const failure = ApplicationFailure.create({
      type: executionFailedType,
      message: outcome.message,
      nonRetryable: true,
      details: [outcome],
    });
    // The run's outcome, not an error in its code: the workflow's stack would only show Trellis's.
    failure.stack = '';
    throw failure;
  }
  if (outcome.status === 'Canceled' && root.consideredCancelled) {
    throw new CancelledFailure(outcome.message);
  }
  return outcome;
}
