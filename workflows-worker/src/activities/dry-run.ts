/**
 * A dry run's task (docs/ARCHITECTURE.md#dry-runs): whether it runs for real (only a pure
 * plugin's), and otherwise the output it returns instead, from the first source that has one:
 * the request's mock, the task's recorded output in the workflow's latest completed real
 * execution, or one generated from its plugin's output schema.
 */
import type { Kysely } from 'kysely';
import * as taskExecutionRepository from '#store/task-execution-repository.js';
import type { Database, TaskDryRunPlan } from '#store/tables.js';
import { runsForRealInDryRun, UNDECLARED_EFFECTS } from '#definition/plugin-effects.js';
import { sampleOutput } from '#definition/sample-output.js';
import type { PluginRunner } from '#plugin-host/runner.js';
import type { LoadedDefinition } from './loaded-definition.js';
import type { TaskPlugin } from './task-plugin.js';

/**
 * What a dry run's task does: its plan (recorded on the task, as the API and the console show
 * it), and unless its plugin runs for real, the output it returns instead with the log line
 * saying where it came from.
 */
export interface DryRunDecision {
  plan: TaskDryRunPlan;
  instead?: { output: unknown; message: string };
}

/**
 * What a task of a dry run does with these resolved parameters: runs for real (its plugin is
 * pure), or returns an output from the first source that has one.
 */
export async function dryRunDecision(
  deps: { db: Kysely<Database>; runner: PluginRunner },
  loaded: LoadedDefinition,
  taskName: string,
  plugin: TaskPlugin,
  parameters: Record<string, unknown>,
  item?: number,
): Promise<DryRunDecision> {
  const { execution } = loaded;
  const manifest = await deps.runner.installedManifest(plugin.type, plugin.version);
  const effects = manifest?.effects ?? UNDECLARED_EFFECTS;
  const planned = (source: TaskDryRunPlan['source'], recordedFrom: string | null = null) => ({
    source,
    recordedFrom,
    plugin: plugin.type,
    effects,
    parameters,
  });
  if (runsForRealInDryRun(effects)) return { plan: planned('RanForReal') };
  const notRun = `${plugin.type} (effects: ${effects}) was not run`;
  const mocks = execution.dryRunMocks ?? {};
  if (Object.hasOwn(mocks, taskName)) {
    return {
      plan: planned('Mock'),
      instead: {
        output: mocks[taskName],
        message: `Dry run: output from the request's mock; ${notRun}.`,
      },
    };
  }
  // A test case gives the same result anywhere: no output recorded by this instance's runs.
  const recorded =
    execution.dryRunTestCase === null
      ? await taskExecutionRepository.recordedOutput(deps.db, execution.workflowId, taskName, item)
      : undefined;
  if (recorded) {
    return {
      plan: planned('Recorded', recorded.executionId),
      instead: {
        output: recorded.output,
        message: `Dry run: output recorded by execution ${recorded.executionId} (the latest completed real run); ${notRun}.`,
      },
    };
  }
  return {
    plan: planned('Generated'),
    instead: {
      output: sampleOutput(manifest?.output ?? {}),
      message: `Dry run: output generated from the output schema of ${plugin.type}; ${notRun}.`,
    },
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
