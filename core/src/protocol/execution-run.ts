/**
 * How the Temporal run of one Trellis execution is started, wherever it is started from: its
 * input, its search attributes, and the summary and details the Temporal UI shows (the Trellis
 * workflow's name and ids). Deterministic, so that workflow code may use it too.
 */
import type { ExecutionInput } from './messages.js';
import {
  TrellisDryRun,
  TrellisExecutionId,
  TrellisProject,
  TrellisWorkflowId,
  TrellisWorkflowName,
} from './search-attributes.js';
import { runDetails, runSummary, type RunIds } from './user-metadata.js';

/** The execution whose run starts: its ids and project, and what its details show. */
export type ExecutionRun = Required<Pick<RunIds, 'workflowId' | 'workflowName'>> &
  Pick<RunIds, 'triggerId' | 'rerunOf' | 'project'> & {
    id: string;
    projectId: string;
    /** A dry run: its run carries `TrellisDryRun` (true) where the namespace has it. */
    dryRun?: boolean;
  };

/**
 * The start options every run of an execution carries (its Temporal workflow id aside). Its
 * project is its fairness key: the task queues dispatch the workflow and activity tasks of each
 * project in turn (its activities and children inherit the key), so one project's flood of
 * runs does not starve another's. With `projectAttribute` (the namespace has `TrellisProject`),
 * its project's name is an attribute too.
 */
export function executionRunOptions(
  execution: ExecutionRun,
  projectAttribute: boolean,
  dryRunAttribute = false,
) {
  return {
    priority: { fairnessKey: execution.projectId },
    args: [{ executionId: execution.id } satisfies ExecutionInput] as [ExecutionInput],
    typedSearchAttributes: [
      { key: TrellisWorkflowId, value: execution.workflowId },
      { key: TrellisWorkflowName, value: execution.workflowName },
      { key: TrellisExecutionId, value: execution.id },
      ...projectAttributes(projectAttribute ? execution.project : undefined),
      ...(execution.dryRun === true && dryRunAttribute
        ? [{ key: TrellisDryRun, value: true }]
        : []),
    ],
    staticSummary: runSummary(execution.workflowName),
    staticDetails: runDetails({ ...execution, executionId: execution.id }),
  };
}

/** `TrellisProject` with the project's name, or nothing when the namespace lacks it (undefined). */
export function projectAttributes(project: string | undefined) {
  return project === undefined ? [] : [{ key: TrellisProject, value: project }];
}
