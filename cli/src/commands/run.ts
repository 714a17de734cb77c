import type { Command } from 'commander';
import { workflowIdOf } from '@trellis/sdk/mcp';
import { InvalidArgumentError } from 'commander';
import { UsageError } from '../failures.js';
import { addInput, runInputs, type Inputs } from '../inputs.js';
import type { Act } from './act.js';
import { reportStartedRun } from './follow-run.js';

export interface InputOptions {
  input?: Inputs;
  inputsFile?: string;
}

/** Adds `--input` and `--inputs-file` to a command that starts a run. */
export function withInputOptions(command: Command): Command {
  return command
    .option(
      '-i, --input <key=value>',
      'an input of the run; repeatable; the value is JSON when it parses as JSON, else text',
      addInput,
    )
    .option('--inputs-file <file>', 'inputs as a JSON object (--input wins); - reads stdin');
}

/**
 * One `--mock task=<json>` added to the ones before it: the task's output in a dry run, JSON
 * (text is `'"text"'`), since a mock stands for what the task's plugin would return.
 */
export function addMock(pair: string, previous: Inputs = {}): Inputs {
  const equals = pair.indexOf('=');
  if (equals <= 0) throw new InvalidArgumentError('Write it as task=<json>.');
  const task = pair.slice(0, equals);
  try {
    return { ...previous, [task]: JSON.parse(pair.slice(equals + 1)) as unknown };
  } catch (error) {
    throw new InvalidArgumentError(
      `The output of ${task} is not JSON (${(error as Error).message}); quote text as '"text"'.`,
    );
  }
}

/** `trellis run <workflow>`. */
export function runCommand(program: Command, act: Act): void {
  const run = program
    .command('run')
    .description('execute a workflow: print the new execution id, or --follow it to its end')
    .argument('<workflow>', 'its name or id');
  withInputOptions(run)
    .option('-f, --follow', 'show the tasks live; exit 0 only when the run Completed')
    .option('--logs', 'with --follow: show log entries as they are written')
    .option(
      '--dry-run',
      'a dry run: only pure tasks run; the others return a mock, a recorded or a generated output',
    )
    .option(
      '-m, --mock <task=json>',
      "with --dry-run: a task's output, as JSON; repeatable",
      addMock,
    )
    .addHelpText(
      'after',
      `
Examples:
  trellis run Totals --input 'values=[1,2,3]' --input factor=10 --follow
  trellis run Hello --input who=world             # prints the execution id
  trellis run Hello --json | jq -r .executionId
  trellis run Orders --dry-run --mock 'Fetch={"status":200,"body":[]}' --follow --logs`,
    )
    .action(
      act<
        [string],
        InputOptions & { follow?: boolean; logs?: boolean; dryRun?: boolean; mock?: Inputs }
      >(async (context, [workflow], options) => {
        const { trellis } = context;
        if (options.mock && !options.dryRun) {
          throw new UsageError('--mock is only for a dry run: add --dry-run.');
        }
        const inputs = await runInputs(options);
        const workflowId = await workflowIdOf(trellis, workflow);
        const started = await trellis.POST('/workflows/{workflowId}/executions', {
          params: { path: { workflowId } },
          body: {
            workflowId,
            ...(inputs ? { inputs } : {}),
            ...(options.dryRun ? { dryRun: true } : {}),
            ...(options.mock ? { mocks: options.mock } : {}),
          },
        });
        return reportStartedRun(context, started, options);
      }),
    );
}
