/**
 * Preparing a run: what its workflow needs to start on its tasks (the graph, each task's row id,
 * which tasks are quick, what a rerun took over, the webhooks it notifies) and the entry that
 * opens its log. The API prepares the runs it starts as it records them, so they start on their
 * tasks at once; every other run (a schedule's firing, a subworkflow's child, a run recovery
 * starts, one that waits for a concurrency slot) prepares itself in its first activity, with the
 * same functions (docs/ARCHITECTURE.md#start).
 */
import type { TrellisConfig } from '#platform/config/types.js';
import type { WorkflowDefinition } from '#definition/types.js';
import type { NotifyTargets } from '#protocol/notifications.js';
import type { PreparedRun } from '#protocol/messages.js';
import { toRunDefinition, type RunDefinition } from '#protocol/run-definition.js';

/** A run's task rows' ids by name, the tasks that are quick, and those a rerun took over. */
export interface PreparedTasks {
  ids: ReadonlyMap<string, string>;
  quick: ReadonlySet<string>;
  reused?: ReadonlySet<string>;
}

/** The first entry of an execution's log, written by the run that takes it on. */
export function executionStartedMessage(tasks: number, triggerId: string | null): string {
  return `Execution started (${tasks} tasks)${triggerId ? ` by trigger ${triggerId}` : ''}.`;
}

/** The webhooks a run notifies, from the configuration of the process preparing it; undefined when none. */
export function notifyTargets(config: TrellisConfig): NotifyTargets | undefined {
  const { Webhooks, MaxAttempts } = config.Notifications;
  if (Webhooks.length === 0) return undefined;
  return {
    webhooks: Webhooks.map((webhook) => ({ url: webhook.Url, events: [...webhook.Events] })),
    maxAttempts: MaxAttempts,
  };
}

/** The run definition of an execution, with the webhooks its run notifies. */
export function runDefinitionOf(
  config: TrellisConfig,
  executionId: string,
  definition: WorkflowDefinition,
  tasks: PreparedTasks,
): RunDefinition {
  const notify = notifyTargets(config);
  return {
    ...toRunDefinition(executionId, definition, tasks.ids, tasks.quick, tasks.reused),
    ...(notify ? { notify } : {}),
  };
}

/**
 * Whether the API can prepare the run of a definition: every task is a plugin's (a subworkflow
 * or forEach task's first attempt starts children, whose writes are not the task's own). It
 * also needs each plugin's row to say whether it is quick (`quickTaskNames`).
 */
export function preparable(definition: WorkflowDefinition): boolean {
  return definition.tasks.every(
    (task) => task.workflow === undefined && task.forEach === undefined,
  );
}

/** The prepared input of a run the API starts. */
export function preparedRun(
  config: TrellisConfig,
  execution: { id: string; triggerId: string | null },
  definition: WorkflowDefinition,
  tasks: PreparedTasks,
  statusAttribute: boolean,
): PreparedRun {
  return {
    run: runDefinitionOf(config, execution.id, definition, tasks),
    ...(statusAttribute ? { statusAttribute: true as const } : {}),
    started: executionStartedMessage(definition.tasks.length, execution.triggerId),
  };
}
