import { InvalidArgumentError, type Command } from 'commander';
import { workflowIdOf } from '@trellis/sdk/mcp';
import { exitCodes } from '../failures.js';
import { readText } from '../inputs.js';
import type { Act } from './act.js';

function count(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > 20) {
    throw new InvalidArgumentError('Give a whole number from 1 to 20.');
  }
  return parsed;
}

/** `trellis replay <workflow> -f <file>`: a candidate replayed on the workflow's latest runs. */
export function replayCommand(program: Command, act: Act): void {
  program
    .command('replay')
    .description(
      "re-run a candidate definition as dry runs on a workflow's latest finished executions (their inputs, their tasks' recorded outputs) and show where it diverges",
    )
    .argument('<workflow>', 'its name or id')
    .requiredOption('-f, --file <file>', 'the candidate definition file; - reads standard input')
    .option('--last <n>', 'how many of the latest finished executions (default 5)', count)
    .option('--fail-on-divergence', 'exit 5 when a replay diverges')
    .addHelpText(
      'after',
      `
Examples:
  trellis replay Orders -f workflows/Orders.json --last 10
  git show HEAD:workflows/Orders.json | trellis replay Orders -f - --fail-on-divergence`,
    )
    .action(
      act<[string], { file: string; last?: number; failOnDivergence?: boolean }>(
        async ({ trellis, output }, [workflow], options) => {
          const definition = await readText(options.file);
          const workflowId = await workflowIdOf(trellis, workflow);
          const replayed = await trellis.envelope.POST('/workflows/{workflowId}/replay', {
            params: { path: { workflowId } },
            body: { definition, ...(options.last === undefined ? {} : { last: options.last }) },
          });
          output.data({ ...replayed.data, messages: replayed.messages });
          const { green, red, dim } = output.colors;
          for (const execution of replayed.data.executions) {
            const then = execution.status;
            const now = execution.replayStatus ?? 'not run';
            const replay = execution.replayExecutionId
              ? dim(` replay ${execution.replayExecutionId}`)
              : '';
            const mark = execution.diverged ? red('\u2717') : green('\u2713');
            output.line(`${mark} ${execution.executionId} (${then} \u2192 ${now})${replay}`);
            for (const divergence of execution.divergences) {
              output.line(`    ${divergence.kind}: ${divergence.message}`);
            }
          }
          for (const message of replayed.messages) output.line(message);
          return options.failOnDivergence === true && replayed.data.diverged > 0
            ? exitCodes.testsFailed
            : exitCodes.ok;
        },
      ),
    );
}
