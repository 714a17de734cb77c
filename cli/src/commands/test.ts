import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import type { components, TrellisClient } from '@trellis/sdk';
import { definitionOutline, workflowIdOf } from '@trellis/sdk/mcp';
import { CliError, exitCodes } from '../failures.js';
import { junitXml, type JunitSuite } from '../output/junit.js';
import type { Output } from '../output/output.js';
import type { Act } from './act.js';
import { definitionFiles, toldAsFile } from '../definition-files.js';

/** The server's report: a stored workflow's (with its id), or a new workflow's. */
type TestReport =
  components['schemas']['WorkflowTestReport'] | components['schemas']['CandidateTestReport'];

/** What `trellis test` tested of one workflow: the server's report. */
export interface TestedWorkflow {
  /** The definition file, for a folder's; none for a stored workflow. */
  file?: string;
  name: string;
  report: TestReport;
}

/**
 * Runs the test cases of each definition file of a folder, or of one file (each as a candidate of
 * the project's workflow of its name, or as a new workflow's when the project has none of its
 * name), or of one stored workflow (its current revision).
 */
export async function testWorkflows(
  trellis: TrellisClient,
  target: string,
): Promise<TestedWorkflow[]> {
  const found = await stat(target).catch(() => undefined);
  if (!found?.isDirectory() && !found?.isFile()) {
    const workflowId = await workflowIdOf(trellis, target);
    const report = await trellis.POST('/workflows/{workflowId}/tests', {
      params: { path: { workflowId } },
      body: {},
    });
    return [{ name: report.name, report }];
  }
  const files = found.isDirectory()
    ? await definitionFiles(target)
    : [{ file: path.basename(target), text: await readFile(target, 'utf8') }];
  const stored = new Map<string, string>();
  for await (const item of trellis.all('/workflows', { params: { query: { pageSize: 1000 } } })) {
    stored.set(item.name, item.id);
  }
  const tested: TestedWorkflow[] = [];
  for (const { file, text } of files) {
    const { name = file } = definitionOutline(text);
    const workflowId = stored.get(name);
    const report = await (
      workflowId === undefined
        ? trellis.POST('/workflows/tests', { body: { definition: text } })
        : trellis.POST('/workflows/{workflowId}/tests', {
            params: { path: { workflowId } },
            body: { definition: text },
          })
    ).catch((error: unknown) => {
      throw toldAsFile(error, file);
    });
    tested.push({ file, name, report });
  }
  return tested;
}

/** Each failed case of the workflows tested, as `Workflow / case: reason; reason`. */
export function failedCases(tested: readonly TestedWorkflow[]): string[] {
  return tested.flatMap(({ name, report }) =>
    report.cases
      .filter((testCase) => !testCase.passed)
      .map(
        (testCase) =>
          `${name} / ${testCase.name}: ${testCase.failures.map(reason).join('; ')} (execution ${testCase.executionId})`,
      ),
  );
}

const reason = (failure: { path: string; message: string }) =>
  failure.path === 'status' ? failure.message : `${failure.path}: ${failure.message}`;

/** The results for people: each workflow, each case with a mark, the reasons of each failure. */
export function printTested(output: Output, tested: readonly TestedWorkflow[]): void {
  const { green, red, bold, dim } = output.colors;
  for (const workflow of tested) {
    const from = workflow.file ? dim(` (${workflow.file})`) : '';
    output.line(bold(`${workflow.name}${from}`));
    const { cases } = workflow.report;
    if (cases.length === 0) output.line(dim('  no test cases'));
    for (const testCase of cases) {
      const took = dim(`(${testCase.durationMilliseconds} ms)`);
      if (testCase.passed) {
        output.line(`  ${green('\u2713')} ${testCase.name} ${took}`);
        continue;
      }
      output.line(
        `  ${red('\u2717')} ${testCase.name} ${took} ${dim(`execution ${testCase.executionId}`)}`,
      );
      for (const failure of testCase.failures) output.line(`      ${reason(failure)}`);
    }
  }
  const all = tested.flatMap(({ report }) => report.cases);
  const failed = all.filter((testCase) => !testCase.passed).length;
  const summary = `${all.length - failed} passed, ${failed} failed.`;
  output.line(failed > 0 ? red(summary) : green(summary));
}

/** The results as JUnit suites: one per workflow. */
export function junitSuites(tested: readonly TestedWorkflow[]): JunitSuite[] {
  return tested.map(({ name, report }) => ({
    name,
    cases: report.cases.map((testCase) => ({
      name: testCase.name,
      time: testCase.durationMilliseconds / 1000,
      ...(testCase.passed ? {} : { failures: testCase.failures.map(reason) }),
      output:
        'workflowId' in report
          ? `Dry run: execution ${testCase.executionId} of workflow ${report.workflowId} (${testCase.status}).`
          : `Dry run: execution ${testCase.executionId} of draft workflow ${report.draftWorkflowId} (${testCase.status}).`,
    })),
  }));
}

export function testCommand(program: Command, act: Act): void {
  program
    .command('test')
    .description(
      "run workflows' test cases as dry runs: each definition file of a folder (as a candidate), or a stored workflow",
    )
    .argument(
      '<dir|workflow>',
      'a folder of definition files (or one file), or a stored workflow\u2019s name or id',
    )
    .option('--junit <file>', 'also write the results as JUnit XML, for a CI system')
    .addHelpText(
      'after',
      `
Exit code 5 when a case failed. A file whose workflow the project does not have yet is tested as
a new workflow (POST /workflows/tests): its cases run before it is applied.

Examples:
  trellis test workflows/ --junit test-results.xml
  trellis test Orders`,
    )
    .action(
      act<[string], { junit?: string }>(async ({ trellis, output }, [target], options) => {
        const tested = await testWorkflows(trellis, target);
        output.data(tested);
        printTested(output, tested);
        if (options.junit !== undefined) {
          await writeFile(options.junit, junitXml(junitSuites(tested))).catch((error: unknown) => {
            throw new CliError(
              `Cannot write ${options.junit}: ${error instanceof Error ? error.message : String(error)}.`,
            );
          });
        }
        return failedCases(tested).length > 0 ? exitCodes.testsFailed : exitCodes.ok;
      }),
    );
}
