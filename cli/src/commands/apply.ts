import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { TrellisApiError } from '@trellis/sdk';
import { readableDefinition } from '@trellis/sdk/mcp';
import { CliError, exitCodes } from '../failures.js';
import { definitionFiles } from '../definition-files.js';
import type { Colors } from '../output/output.js';
import type { Act } from './act.js';
import { failedCases, printTested, testWorkflows } from './test.js';

/**
 * `trellis apply <dir>` and `trellis export <dir>`: a project's workflows kept as a folder of
 * definition files, one `<name>.json` each (README "Workflows as code"). The server plans,
 * checks and applies; the CLI reads and writes the files and prints the plan.
 */

/** The server's refusal with each `body.workflows[i]` told as the file it came from. */
function toldByFile(error: unknown, files: readonly string[]): unknown {
  if (!(error instanceof TrellisApiError)) return error;
  const byFile = (text: string) =>
    text.replace(/body\.workflows\[(\d+)\]\.definition/g, (place, index: string) => {
      const file = files[Number(index)];
      return file === undefined ? place : file;
    });
  return new TrellisApiError(
    error.status,
    error.messages.map(byFile),
    error.body,
    error.retryAfterSeconds,
  );
}

/** A unified diff with its removed lines red and added ones green (plain without colours). */
export function coloured(diff: string, colors: Colors): string {
  return diff
    .trimEnd()
    .split('\n')
    .map((line) =>
      line.startsWith('---') || line.startsWith('+++')
        ? colors.bold(line)
        : line.startsWith('@@')
          ? colors.cyan(line)
          : line.startsWith('-')
            ? colors.red(line)
            : line.startsWith('+')
              ? colors.green(line)
              : line,
    )
    .join('\n');
}

/** A workflow's file name: its name, with what no file name may hold replaced by `_`. */
export function fileNameOf(workflowName: string): string {
  // eslint-disable-next-line no-control-regex
  const safe = workflowName.replace(/[/\\:*?"<>|\u0000-\u001f]/g, '_').replace(/^\./, '_');
  return `${safe}.json`;
}

export function applyCommands(program: Command, act: Act): void {
  program
    .command('apply')
    .description(
      'make the project\u2019s workflows match a folder of definition files (<name>.json)',
    )
    .argument('<dir>', 'the folder')
    .option('--dry-run', 'print the changes and store nothing')
    .option('--source <text>', 'recorded on each revision it stores (e.g. a Git commit)')
    .option('--prune', 'also delete the workflows no file defines')
    .option(
      '--accept-breaking',
      'store updates even when they break declared inputs or outputs for their callers',
    )
    .option(
      '--test',
      "first run each file's test cases (as `trellis test`); apply nothing when one fails",
    )
    .action(
      act<
        [string],
        {
          dryRun?: boolean;
          source?: string;
          prune?: boolean;
          acceptBreaking?: boolean;
          test?: boolean;
        }
      >(async ({ trellis, output }, [folder], options) => {
        if (options.test === true) {
          const tested = await testWorkflows(trellis, folder);
          printTested(output, tested);
          const failed = failedCases(tested);
          if (failed.length > 0) {
            throw new CliError(
              `Nothing was applied: ${failed.length} test case${failed.length === 1 ? '' : 's'} failed.\n${failed.map((line) => `  ${line}`).join('\n')}`,
              'Fix the definitions or their tests, then apply again.',
              exitCodes.testsFailed,
            );
          }
        }
        const files = await definitionFiles(folder);
        const applied = await trellis.envelope
          .POST('/workflows/apply', {
            body: {
              workflows: files.map(({ text }) => ({ definition: text })),
              ...(options.source === undefined ? {} : { source: options.source }),
              ...(options.dryRun === true ? { dryRun: true } : {}),
              ...(options.prune === true ? { prune: true } : {}),
              ...(options.acceptBreaking === true ? { acceptBreaking: true } : {}),
            },
          })
          .catch((error: unknown) => {
            throw toldByFile(
              error,
              files.map(({ file }) => file),
            );
          });
        output.data({ ...applied.data, messages: applied.messages });
        for (const workflow of applied.data.workflows) {
          if (workflow.diff !== '') output.line(coloured(workflow.diff, output.colors));
        }
        for (const message of applied.messages) output.line(message);
      }),
    );

  program
    .command('export')
    .description('write each workflow of the project to a folder, as <name>.json')
    .argument('<dir>', 'the folder (made when missing)')
    .action(
      act<[string]>(async ({ trellis, output }, [folder]) => {
        await mkdir(folder, { recursive: true });
        const written: { name: string; file: string }[] = [];
        for await (const item of trellis.all('/workflows', {
          params: { query: { pageSize: 1000 } },
        })) {
          const file = fileNameOf(item.name);
          if (written.some((earlier) => earlier.file === file)) {
            throw new CliError(
              `Workflows "${item.name}" and "${written.find((earlier) => earlier.file === file)!.name}" would both be written to ${file}.`,
              'Rename one of them.',
            );
          }
          const detail = await trellis.GET('/workflows/{workflowId}', {
            params: { path: { workflowId: item.id } },
          });
          await writeFile(path.join(folder, file), `${readableDefinition(detail.workflow)}\n`);
          written.push({ name: item.name, file });
        }
        output.data(written);
        for (const { file } of written) output.line(path.join(folder, file));
        output.line(`Exported ${written.length} workflow${written.length === 1 ? '' : 's'}.`);
      }),
    );
}
