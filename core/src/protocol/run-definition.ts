/**
 * What the workflow needs to know about a definition: the graph, the error handling, timeouts
 * and approvals, and each task's row id. Parameters, plugin types and variables stay out of it
 * (activities read them from the execution's snapshot), so history stays small however big the
 * definition's data is. Pure: built where the run is prepared (the API, for the runs it starts
 * with `prepared` input; else the run's first activity), read by the workflow.
 */
import type { NotifyTargets } from '#protocol/notifications.js';
import type { ErrorHandling, TaskDefinition, WorkflowDefinition } from '#definition/types.js';

export interface RunTask {
  /** The task execution row's id. */
  id: string;
  name: string;
  dependencies: string[];
  runOnFailureOf: string[];
  errorHandling?: ErrorHandling;
  timeoutMilliseconds?: number;
  manualApproval: boolean;
  /**
   * The approval's decision when no one decides within `milliseconds`
   * (`manualApproval.timeoutMilliseconds` and `onTimeout`). Absent when it waits for a person.
   */
  approvalTimeout?: { milliseconds: number; onTimeout: 'Approve' | 'Reject' };
  /**
   * The task's plugin is quick (`PluginManifest.quick`): its attempts run as local activities.
   * Decided once, when the run is prepared, so that a replay takes the same path (it is in the
   * run's input or its first activity's result). Absent in
   * histories recorded before local attempts existed, whose tasks ran as regular activities.
   */
  quick?: true;
  /**
   * A rerun took the task's output over from the execution it reruns: the task starts out
   * Completed and does not run. Absent in histories recorded before reruns existed.
   */
  reused?: true;
  /**
   * The task runs a workflow (`workflow`) as a child workflow (subworkflow.ts). Absent in
   * histories recorded before subworkflows existed.
   */
  subworkflow?: true;
  /**
   * The task runs once per item (foreach.ts), at most `parallelism` at once when it says.
   * Absent for every other task.
   */
  forEach?: { parallelism?: number };
}

export interface RunDefinition {
  executionId: string;
  degreeOfParallelism?: number;
  timeoutMilliseconds?: number;
  errorHandling?: ErrorHandling;
  tasks: RunTask[];
  /**
   * The definition declares `outputs`: they are evaluated when the run completes. Absent in
   * histories recorded before outputs existed.
   */
  outputs?: true;
  /** The webhooks the run notifies (`Notifications.Webhooks`); absent when none. */
  notify?: NotifyTargets;
}

/**
 * The run definition of a parsed definition whose task rows have the given ids, whose tasks
 * named in `quickTasks` have a quick plugin, and whose tasks named in `reusedTasks` a rerun took
 * over.
 */
export function toRunDefinition(
  executionId: string,
  definition: WorkflowDefinition,
  taskIds: ReadonlyMap<string, string>,
  quickTasks: ReadonlySet<string>,
  reusedTasks: ReadonlySet<string> = new Set(),
): RunDefinition {
  const configuration = definition.configuration ?? {};
  return {
    executionId,
    ...(configuration.degreeOfParallelism !== undefined
      ? { degreeOfParallelism: configuration.degreeOfParallelism }
      : {}),
    ...(configuration.timeoutMilliseconds !== undefined
      ? { timeoutMilliseconds: configuration.timeoutMilliseconds }
      : {}),
    ...(configuration.errorHandling ? { errorHandling: configuration.errorHandling } : {}),
    ...(Object.keys(definition.outputs ?? {}).length > 0 ? { outputs: true as const } : {}),
    tasks: definition.tasks.map((task) => {
      const id = taskIds.get(task.name);
      if (id === undefined) throw new Error(`No task row for task '${task.name}'`);
      return {
        id,
        name: task.name,
        dependencies: task.dependencies ?? [],
        runOnFailureOf: task.runOnFailureOf ?? [],
        ...(task.errorHandling ? { errorHandling: task.errorHandling } : {}),
        ...(task.timeoutMilliseconds !== undefined
          ? { timeoutMilliseconds: task.timeoutMilliseconds }
          : {}),
        manualApproval: task.manualApproval?.enabled === true,
        ...approvalTimeout(task),
        ...(quickTasks.has(task.name) ? { quick: true as const } : {}),
        ...(reusedTasks.has(task.name) ? { reused: true as const } : {}),
        ...(task.workflow !== undefined ? { subworkflow: true as const } : {}),
        ...(task.forEach
          ? {
              forEach:
                task.forEach.parallelism !== undefined
                  ? { parallelism: task.forEach.parallelism }
                  : {},
            }
          : {}),
      };
    }),
  };
}

function approvalTimeout(task: TaskDefinition): Pick<RunTask, 'approvalTimeout'> {
  const approval = task.manualApproval;
  if (approval?.enabled !== true) return {};
  const { timeoutMilliseconds, onTimeout } = approval;
  if (timeoutMilliseconds === undefined || onTimeout === undefined) return {};
  return { approvalTimeout: { milliseconds: timeoutMilliseconds, onTimeout } };
}
