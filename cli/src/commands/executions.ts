import type { components } from '@trellis/sdk';
import { InvalidArgumentError, Option, type Command } from 'commander';
import {
  definitionOutline,
  readLogs,
  taskOf,
  tasksOfExecution,
  workflowIdOf,
} from '@trellis/sdk/mcp';
import type { Context } from '../context.js';
import { UsageError } from '../failures.js';
import { executionEvents } from '../follow/event-source.js';
import { logLine } from '../follow/views.js';
import { compact, elapsed, styleStatus, time } from '../output/format.js';
import { table } from '../output/table.js';
import type { Act } from './act.js';
import { runInputs } from '../inputs.js';
import { followExecution, reportStartedRun } from './follow-run.js';
import { withInputOptions, type InputOptions } from './run.js';
import {
  assertSingle,
  runBulk,
  withBulkOptions,
  type BulkOptions,
  type BulkVerb,
} from './bulk-executions.js';

type ExecutionStatus = components['schemas']['ExecutionStatus'];
const executionStatuses: ExecutionStatus[] = [
  'Pending',
  'Running',
  'Paused',
  'Completed',
  'Failed',
  'Canceled',
];

/** `trellis executions list|show|logs|cancel|rerun`. */
export function executionCommands(program: Command, act: Act): void {
  const executions = program
    .command('executions')
    .alias('execution')
    .description('runs of a workflow: list, show, logs, cancel, rerun');

  executions
    .command('list')
    .alias('ls')
    .description('list a workflow\u2019s executions, newest first')
    .argument('<workflow>', 'its name or id')
    .addOption(
      new Option('--status <status>', 'only those in this status').choices(executionStatuses),
    )
    .option('-n, --limit <count>', 'at most this many (1-1000)', positiveCount, 20)
    .action(
      act<[string], { status?: ExecutionStatus; limit: number }>(
        async ({ trellis, output }, [workflow], { status, limit }) => {
          const workflowId = await workflowIdOf(trellis, workflow);
          const page = await trellis.page('/workflows/{workflowId}/executions', {
            params: {
              path: { workflowId },
              query: { pageSize: limit, ...(status ? { status } : {}) },
            },
          });
          output.data(page.data);
          if (page.data.length === 0) {
            output.line(status ? `No ${status} executions.` : 'No executions yet.');
            return;
          }
          const rows = page.data.map((execution) => [
            execution.id,
            styleStatus(output.colors, execution.status),
            time(execution.executionStart),
            elapsed(execution.executionStart, execution.executionEnd),
          ]);
          output.line(table(output.colors, ['ID', 'STATUS', 'STARTED', 'DURATION'], rows));
          const { totalCount } = page.pagination;
          if (totalCount > page.data.length) {
            output.line(
              output.colors.dim(`${page.data.length} of ${totalCount}; --limit shows more.`),
            );
          }
        },
      ),
    );

  executions
    .command('show')
    .description('show an execution: status, times, inputs, outputs and tasks')
    .argument('<workflow>', 'its name or id')
    .argument('<execution>', 'the execution id')
    .action(
      act<[string, string]>(async ({ trellis, output }, [workflow, executionId]) => {
        const workflowId = await workflowIdOf(trellis, workflow);
        const path = { workflowId, executionId };
        const execution = await trellis.GET('/workflows/{workflowId}/executions/{executionId}', {
          params: { path },
        });
        const tasks = await tasksOfExecution(trellis, path);
        output.data({ ...execution, tasks });
        const { colors } = output;
        const name = definitionOutline(execution.workflow).name;
        const facts: [string, string][] = [
          ['Execution', execution.executionId],
          ['Workflow', name ? `${name} (${workflowId})` : workflowId],
          ['Status', styleStatus(colors, execution.status)],
          ['Started', time(execution.executionStart)],
          ['Ended', time(execution.executionEnd)],
          ['Duration', elapsed(execution.executionStart, execution.executionEnd)],
        ];
        if (execution.rerunOf) facts.push(['Rerun of', execution.rerunOf]);
        if (Object.keys(execution.inputs).length > 0)
          facts.push(['Inputs', compact(execution.inputs)]);
        if (execution.outputs) facts.push(['Outputs', compact(execution.outputs)]);
        for (const [label, value] of facts) {
          output.line(
            `${colors.bold(label.padEnd(11))}${value.replace(/\n/g, `\n${' '.repeat(11)}`)}`,
          );
        }
        output.line();
        const rows = tasks.map((task) => [
          task.name,
          styleStatus(colors, task.status),
          task.interruptedAttempts > 0
            ? `${task.attempts} (${task.interruptedAttempts} interrupted)`
            : String(task.attempts),
          time(task.startTime),
          elapsed(task.startTime, task.endTime),
          task.message,
        ]);
        output.line(
          table(colors, ['TASK', 'STATUS', 'ATTEMPTS', 'STARTED', 'DURATION', 'MESSAGE'], rows),
        );
      }),
    );

  executions
    .command('logs')
    .description('print an execution\u2019s log entries and its tasks\u2019, oldest first')
    .argument('<workflow>', 'its name or id')
    .argument('<execution>', 'the execution id')
    .option('-t, --task <name>', 'only this task\u2019s entries')
    .option('-f, --follow', 'keep printing new entries until the run ends')
    .action(
      act<[string, string], { task?: string; follow?: boolean }>(
        async (context, [workflow, executionId], options) => {
          const workflowId = await workflowIdOf(context.trellis, workflow);
          const path = { workflowId, executionId };
          if (options.follow) return followLogs(context, path, options.task);
          const entries = await readLogs(context.trellis, path, options.task);
          const { output } = context;
          output.data(entries);
          for (const entry of entries) output.line(logLine(output.colors, entry, entry.taskName));
        },
      ),
    );

  withBulkOptions(
    executions
      .command('cancel')
      .description(
        'cancel a running or paused execution, or in bulk those a selection names (--id, --status, --since, ...)',
      )
      .argument('[workflow]', 'its name or id (in bulk: only its executions)')
      .argument('[execution]', 'the execution id (none: in bulk)'),
  ).action(
    act<[string | undefined, string | undefined], BulkOptions>(
      async (context, [workflow, executionId], options) => {
        if (executionId === undefined) return runBulk(context, bulkCancel, workflow, options);
        assertSingle(options);
        const { trellis, output } = context;
        const workflowId = await workflowIdOf(trellis, workflow!);
        const canceled = await trellis.envelope.POST(
          '/workflows/{workflowId}/executions/{executionId}/cancel',
          { params: { path: { workflowId, executionId } } },
        );
        output.data({ executionId, messages: canceled.messages });
        for (const message of canceled.messages) output.line(message);
      },
    ),
  );

  const rerun = executions
    .command('rerun')
    .description(
      'run a finished execution again (the original\u2019s inputs unless given), or in bulk the failed ones a selection names',
    )
    .argument('[workflow]', 'its name or id (in bulk: only its executions)')
    .argument('[execution]', 'the execution id (none: in bulk)')
    .option('--from-task <name>', 'run this task and those after it again, reuse the rest')
    .option('--latest', 'bulk: rerun on the workflow\u2019s latest revision, not the one each ran');
  withBulkOptions(withInputOptions(rerun))
    .option('-f, --follow', 'show the tasks live; exit 0 only when the run Completed')
    .option('--logs', 'with --follow: show log entries as they are written')
    .action(
      act<
        [string | undefined, string | undefined],
        InputOptions &
          BulkOptions & { fromTask?: string; follow?: boolean; logs?: boolean; latest?: boolean }
      >(async (context, [workflow, executionId], options) => {
        const { trellis } = context;
        if (executionId === undefined) {
          const revision = options.latest ? 'latest' : 'ran';
          if (options.fromTask !== undefined || options.input || options.inputsFile) {
            throw new UsageError(
              'A bulk rerun reruns each execution with its own inputs: --from-task, --input and --inputs-file need an execution id.',
            );
          }
          return runBulk(context, bulkRerun(revision), workflow, options);
        }
        assertSingle(options);
        const inputs = await runInputs(options);
        const workflowId = await workflowIdOf(trellis, workflow!);
        const started = await trellis.POST(
          '/workflows/{workflowId}/executions/{executionId}/rerun',
          {
            params: { path: { workflowId, executionId } },
            body: {
              ...(options.fromTask !== undefined ? { fromTask: options.fromTask } : {}),
              ...(inputs ? { inputs } : {}),
            },
          },
        );
        return reportStartedRun(context, started, options);
      }),
    );

  executions
    .command('watch')
    .description('show a running execution live until it ends (exit code as run --follow)')
    .argument('<workflow>', 'its name or id')
    .argument('<execution>', 'the execution id')
    .option('--logs', 'show log entries as they are written')
    .action(
      act<[string, string], { logs?: boolean }>(
        async (context, [workflow, executionId], options) => {
          const workflowId = await workflowIdOf(context.trellis, workflow);
          return followExecution(context, workflowId, executionId, options);
        },
      ),
    );
}

/** Prints log entries as they are written, until the run ends (`--json`: one JSON entry a line). */
async function followLogs(
  context: Context,
  path: { workflowId: string; executionId: string },
  taskName: string | undefined,
): Promise<void> {
  const { trellis, output } = context;
  if (taskName) await taskOf(trellis, path, taskName);
  const names = new Map<string, string>();
  for await (const event of executionEvents(trellis, path.workflowId, path.executionId, {
    logs: true,
  })) {
    if (event.event === 'task') names.set(event.data.taskExecutionId, event.data.name);
    if (event.event !== 'log') continue;
    const name = event.data.taskExecutionId ? names.get(event.data.taskExecutionId) : undefined;
    if (taskName !== undefined && name !== taskName) continue;
    output.record({ ...event.data, ...(name ? { taskName: name } : {}) });
    output.line(logLine(output.colors, event.data, name));
  }
}

export function positiveCount(text: string): number {
  const count = Number(text);
  if (!Number.isInteger(count) || count < 1 || count > 1000) {
    throw new InvalidArgumentError('Give a whole number from 1 to 1000.');
  }
  return count;
}

const bulkCancel: BulkVerb = {
  name: 'cancel',
  send: (trellis, body) => trellis.POST('/executions/cancel', { body }),
};

const bulkRerun = (revision: 'ran' | 'latest'): BulkVerb => ({
  name: 'rerun',
  send: (trellis, body) => trellis.POST('/executions/rerun', { body: { ...body, revision } }),
});
