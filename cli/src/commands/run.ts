import type { Command } from 'commander';
import { workflowIdOf } from '@trellis/sdk/mcp';
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

/** `trellis run <workflow>`. */
export function runCommand(program: Command, act: Act): void {
  const run = program
    .command('run')
    .description('execute a workflow: print the new execution id, or --follow it to its end')
    .argument('<workflow>', 'its name or id');
  withInputOptions(run)
    .option('-f, --follow', 'show the tasks live; exit 0 only when the run Completed')
    .option('--logs', 'with --follow: show log entries as they are written')
    .addHelpText(
      'after',
      `
Examples:
  trellis run Totals --input 'values=[1,2,3]' --input factor=10 --follow
  trellis run Hello --input who=world             # prints the execution id
  trellis run Hello --json | jq -r .executionId`,
    )
    .action(
      act<[string], InputOptions & { follow?: boolean; logs?: boolean }>(
        async (context, [workflow], options) => {
          const { trellis } = context;
          const inputs = await runInputs(options);
          const workflowId = await workflowIdOf(trellis, workflow);
          const started = await trellis.POST('/workflows/{workflowId}/executions', {
            params: { path: { workflowId } },
            body: { workflowId, ...(inputs ? { inputs } : {}) },
          });
          return reportStartedRun(context, started, options);
        },
      ),
    );
}
