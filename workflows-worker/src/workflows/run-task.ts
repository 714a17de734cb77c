/**
 * One task of a run, from its start to its end: a plugin's attempts through the task's error
 * handling, a subworkflow (subworkflow.ts) or a forEach task's items (foreach.ts).
 */
import { ActivityFailure, isCancellation, sleep } from '@temporalio/workflow';
import type { ErrorHandling } from '#definition/types.js';
import { canceledWhileRunning } from '#protocol/messages.js';
import type { AttemptInput, RunEnd } from '../activities/index.js';
import { attemptActivities, attemptSummary, taskFailure } from './attempts.js';
import { failurePlan } from './error-handling.js';
import { runForEach } from './foreach.js';
import type { RunTask } from '#protocol/run-definition.js';
import type { RunState } from './run-state.js';
import { runSubworkflowAttempt } from './subworkflow.js';

/**
 * Runs a task's attempts until it completes, is skipped, fails for good or is canceled.
 * `endsRun`: how the run ends if the task completes, which its attempt then records too.
 */
export async function runTask(
  run: RunState,
  task: RunTask,
  handling: ErrorHandling,
  evaluateCondition: boolean,
  endsRun?: RunEnd,
): Promise<void> {
  const { executionId, states, batch } = run;
  const workflowTimeout = run.definition.timeoutMilliseconds;
  const resetRun = run.features.run;
  const { version } = run.features;
  if (task.forEach && version.has('foreach')) {
    const state = await runForEach({
      executionId,
      task,
      handling,
      runParallelism: run.parallelism,
      workflowTimeout,
      run: resetRun,
      version,
    });
    if (state) states.set(task.name, state);
    return;
  }
  for (let attempt = 1; ; attempt++) {
    const onFailure = failurePlan(handling, attempt, Math.random);
    const input: AttemptInput = {
      executionId,
      taskExecutionId: task.id,
      taskName: task.name,
      attempt,
      evaluateCondition: evaluateCondition && attempt === 1,
      onFailure,
      ...(task.timeoutMilliseconds !== undefined
        ? { timeoutMilliseconds: task.timeoutMilliseconds }
        : {}),
      ...(resetRun !== undefined ? { run: resetRun } : {}),
      ...(endsRun !== undefined ? { endsRun } : {}),
      ...(run.unwrittenStart !== undefined ? { startsRun: run.unwrittenStart } : {}),
    };
    const activities = attemptActivities(
      task,
      workflowTimeout,
      attemptSummary(task.name, attempt, onFailure),
    );
    try {
      // Awaits only past the bound (and never in a run from before it): a quick attempt
      // within it starts as it always did.
      let turn = task.quick ? run.localAttempts.reserve() : undefined;
      while (turn) {
        await turn;
        turn = run.localAttempts.reserve();
      }
      const result =
        // Asked once a task with `workflow` runs.
        task.subworkflow && version.has('subworkflows')
          ? await runSubworkflowAttempt(
              input,
              task.timeoutMilliseconds,
              version,
              run.features.statusAttribute,
            )
          : await activities.runTaskAttempt(input);
      if (input.startsRun !== undefined) run.startWritten();
      states.set(
        task.name,
        result.status === 'Skipped'
          ? { status: 'Skipped', skipCause: 'condition' }
          : { status: 'Completed' },
      );
      // Decided by the recorded result, so a run from before `endsRun` replays as it ran.
      if (result.status === 'Completed' && result.ended === true && endsRun) {
        run.endRecorded(endsRun);
      }
      return;
    } catch (error) {
      const outcome = taskFailure(error);
      // A recorded failure wrote the attempt's entries, the run's opening one with them.
      if (outcome !== null && input.startsRun !== undefined) run.startWritten();
      if (outcome === null) {
        if (isCancellation(error) && run.taskScope.consideredCancelled) {
          // An activity that acknowledged the cancel recorded the task Canceled itself, except
          // a local one, which leaves that to the workflow (see runTaskAttempt); the run's
          // `stop` records the others.
          if (error instanceof ActivityFailure) {
            states.set(task.name, { status: 'Canceled' });
            if (task.quick) {
              const message = canceledWhileRunning;
              batch.task({ id: task.id, status: 'Canceled', message });
              batch.log(task.id, 'Warning', message);
            }
          }
          return;
        }
        // Not expected (Temporal retries infrastructure failures forever); fail the task
        // rather than the whole workflow task.
        const message = `Failed: ${error instanceof Error ? error.message : String(error)}`;
        states.set(task.name, { status: 'Failed' });
        batch.task({ id: task.id, status: 'Failed', message });
        batch.log(task.id, 'Error', message);
        return;
      }
      if (outcome === 'Retrying' && onFailure.outcome === 'Retrying') {
        states.set(task.name, { status: 'Retrying' });
        await sleep(onFailure.delayMilliseconds, {
          summary: `Task ${task.name}: back off before attempt ${attempt + 1}`,
        });
        states.set(task.name, { status: 'Running' });
        continue;
      }
      states.set(
        task.name,
        outcome === 'Skipped' ? { status: 'Skipped', skipCause: 'strategy' } : { status: 'Failed' },
      );
      return;
    }
  }
}
