/**
 * Dry runs (docs/ARCHITECTURE.md#dry-runs): what a start checks of one. The worker side, which
 * gives each task that is not pure its output instead of running it, is the `runTaskAttempt`
 * activity's.
 */
import type { Kysely } from 'kysely';
import type { Database } from '#store/tables.js';
import type { WorkflowDefinition } from '#definition/types.js';
import { Invalid } from '#definition/errors.js';
import { problemAt, type Problem } from '#definition/validation/problem.js';
import { installedLookups, type PluginLookup } from '../workflows/validate-definition.js';
import { mockOutputProblems } from '../workflows/mock-outputs.js';

/** What a start asks of a dry run: the outputs it gives tasks by name (`body.mocks`). */
export interface DryRunRequest {
  mocks?: Record<string, unknown>;
  /** The definition's test case the run is (its tasks then take no recorded output). */
  testCase?: string;
}

/**
 * Refuses (`Invalid`, one problem each) mocks for a name that is no task of the definition and
 * mocks that do not fit their task's plugin's declared output schema. A subworkflow task takes
 * none: its child runs as a dry run itself.
 */
export async function assertMocksFit(
  db: Kysely<Database>,
  projectId: string,
  definition: WorkflowDefinition,
  mocks: Record<string, unknown>,
  plugins?: PluginLookup,
): Promise<void> {
  const tasks = new Map(definition.tasks.map((task) => [task.name, task]));
  const installed = installedLookups(db, projectId, plugins);
  const problems: Problem[] = [];
  for (const name of Object.keys(mocks)) {
    const at = `body.mocks.${name}`;
    const task = tasks.get(name);
    if (task === undefined) {
      problems.push(
        problemAt(at, `names no task of the workflow's definition (${name})`, 'validation.unknown'),
      );
      continue;
    }
    if (task.type === undefined) {
      problems.push(
        problemAt(
          at,
          `is a subworkflow task, whose child runs as a dry run itself: it takes no mock`,
        ),
      );
    }
  }
  problems.push(
    ...(await mockOutputProblems(
      definition,
      mocks,
      (name) => `body.mocks.${name}`,
      installed.taskPlugin,
    )),
  );
  if (problems.length > 0) throw new Invalid(problems);
}
