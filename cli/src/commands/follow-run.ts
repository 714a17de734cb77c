import type { ExecutionStarted } from '@trellis/sdk';
import { definitionOutline, tasksOfExecution } from '@trellis/sdk/mcp';
import type { Context } from '../context.js';
import { exitCodes } from '../failures.js';
import { followRun, type RunView } from '../follow/follow.js';
import { executionEvents } from '../follow/event-source.js';
import { liveRunView, plainRunView } from '../follow/views.js';
import { elapsed, pretty } from '../output/format.js';

export interface StartedRunOptions {
  follow?: boolean;
  logs?: boolean;
}

/**
 * What `run` and `executions rerun` do once the server started the run: print its id, or with
 * `--follow` show it until it ends and exit with its outcome.
 */
export async function reportStartedRun(
  context: Context,
  started: ExecutionStarted,
  options: StartedRunOptions,
): Promise<number> {
  if (!options.follow) {
    context.output.data(started);
    context.output.line(started.executionId);
    return exitCodes.ok;
  }
  return followExecution(context, started.workflowId, started.executionId, options);
}

const silentView: RunView = { show() {}, close() {} };

/** Shows an execution live until it ends; then its outcome (and outputs), exiting with it. */
export async function followExecution(
  context: Context,
  workflowId: string,
  executionId: string,
  options: { logs?: boolean },
): Promise<number> {
  const { trellis, output } = context;
  const path = { workflowId, executionId };
  const execution = await trellis.GET('/workflows/{workflowId}/executions/{executionId}', {
    params: { path },
  });
  const outline = definitionOutline(execution.workflow);
  const viewOptions = {
    colors: output.colors,
    taskNames: outline.taskNames,
    logs: options.logs === true,
    startedAt: execution.executionStart,
    title: `${outline.name ?? workflowId}  ${executionId}${execution.dryRun ? '  (dry run)' : ''}`,
    approveCommand: (task: string) =>
      `trellis approvals approve ${workflowId} ${executionId} ${shellWord(task)}`,
  };
  if (execution.dryRun) {
    output.line(
      'Dry run: pure tasks run; every other task returns an output and performs nothing.',
    );
  }
  const view = output.json
    ? silentView
    : output.live
      ? liveRunView(output.io.stdout, viewOptions)
      : plainRunView(output.io.stdout, viewOptions);

  // Ctrl-C stops following, not the run.
  const interrupt = new AbortController();
  const onInterrupt = () => interrupt.abort(new Error('interrupted'));
  process.once('SIGINT', onInterrupt);
  try {
    const events = executionEvents(trellis, workflowId, executionId, {
      logs: options.logs === true,
      signal: interrupt.signal,
    });
    await followRun(events, view);
  } catch (error) {
    if (!interrupt.signal.aborted) throw error;
    output.note(
      `Stopped following; the run goes on. See it with: trellis executions show ${workflowId} ${executionId}`,
    );
    return exitCodes.interrupted;
  } finally {
    process.off('SIGINT', onInterrupt);
  }

  const [ended, tasks] = await Promise.all([
    trellis.GET('/workflows/{workflowId}/executions/{executionId}', { params: { path } }),
    tasksOfExecution(trellis, path),
  ]);
  output.data({ ...ended, tasks });
  const { green, red, yellow, dim } = output.colors;
  const took = elapsed(ended.executionStart, ended.executionEnd);
  switch (ended.status) {
    case 'Completed':
      output.line(green(`Completed in ${took}.`));
      if (ended.outputs && Object.keys(ended.outputs).length > 0) {
        output.line('Outputs:');
        output.line(pretty(ended.outputs));
      }
      return exitCodes.ok;
    case 'Failed':
      output.line(red(`Failed after ${took}.`));
      for (const task of tasks.filter((candidate) => candidate.status === 'Failed')) {
        output.line(`  ${task.name}: ${task.message}`);
      }
      output.line(dim(`Logs: trellis executions logs ${workflowId} ${executionId}`));
      return exitCodes.runFailed;
    case 'Canceled':
      output.line(yellow(`Canceled after ${took}.`));
      return exitCodes.runCanceled;
    case 'Pending':
    case 'Running':
    case 'Paused':
      // The event stream ended before the run did.
      output.note(`The run is still ${ended.status}.`);
      return exitCodes.failed;
  }
}

/** A word as a shell reads it back: quoted when it holds anything but plain characters. */
export const shellWord = (word: string): string =>
  /^[\w./:@-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
