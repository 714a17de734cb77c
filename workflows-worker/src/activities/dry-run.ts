/**
 * A dry run's task (docs/ARCHITECTURE.md#dry-runs): whether it runs for real (only a pure
 * plugin's), and otherwise the output it returns instead, from the first source that has one:
 * the request's mock, the task's recorded output in the workflow's latest completed real
 * execution, or one generated from its plugin's output schema.
 */
import type { Kysely } from 'kysely';
import * as taskExecutionRepository from '#store/task-execution-repository.js';
import type { Database } from '#store/tables.js';
import { runsForRealInDryRun, UNDECLARED_EFFECTS } from '#definition/plugin-effects.js';
import { sampleOutput } from '#definition/sample-output.js';
import type { PluginRunner } from '#plugin-host/runner.js';
import type { LoadedDefinition } from './loaded-definition.js';
import type { TaskPlugin } from './task-plugin.js';

/** A dry run's task that performs nothing: its output and the log line saying where it came from. */
export interface DryRunOutput {
  output: unknown;
  message: string;
}

/**
 * The output a dry run's task returns instead of running its plugin; undefined when the task
 * runs for real (its plugin is pure, or the execution is not a dry run).
 */
export async function dryRunOutput(
  deps: { db: Kysely<Database>; runner: PluginRunner },
  loaded: LoadedDefinition,
  taskName: string,
  plugin: TaskPlugin,
  item?: number,
): Promise<DryRunOutput | undefined> {
  const { execution } = loaded;
  if (!execution.dryRun) return undefined;
  const manifest = await deps.runner.installedManifest(plugin.type, plugin.version);
  const effects = manifest?.effects ?? UNDECLARED_EFFECTS;
  if (runsForRealInDryRun(effects)) return undefined;
  const notRun = `${plugin.type} (effects: ${effects}) was not run`;
  const mocks = execution.dryRunMocks ?? {};
  if (Object.hasOwn(mocks, taskName)) {
    return {
      output: mocks[taskName],
      message: `Dry run: output from the request's mock; ${notRun}.`,
    };
  }
  // A test case gives the same result anywhere: no output recorded by this instance's runs.
  const recorded =
    execution.dryRunTestCase === null
      ? await taskExecutionRepository.recordedOutput(deps.db, execution.workflowId, taskName, item)
      : undefined;
  if (recorded) {
    return {
      output: recorded.output,
      message: `Dry run: output recorded by execution ${recorded.executionId} (the latest completed real run); ${notRun}.`,
    };
  }
  return {
    output: sampleOutput(manifest?.output ?? {}),
    message: `Dry run: output generated from the output schema of ${plugin.type}; ${notRun}.`,
  };
}

/** The log line of a dry run's task that shows what it was given: its parameters, resolved. */
export function resolvedParametersMessage(parameters: Record<string, unknown>): string {
  return `Dry run: parameters resolved to ${JSON.stringify(parameters)}.`;
}

/** Who approves a dry run's approvals, as its tasks' logs and the approvals say. */
export const dryRunDecider = 'dry run';

/** What a dry run's task says of the approval it would wait for. */
export function dryRunApprovalMessage(approvalId: string, comment: string): string {
  return (
    `Dry run: approval ${approvalId} would be asked${comment ? ` (${comment})` : ''}; ` +
    'it is approved at once, no one is asked.'
  );
}
