/**
 * How the Temporal run of one Trellis execution is started, wherever it is started from: its
 * input, its search attributes, and the summary and details the Temporal UI shows (the Trellis
 * workflow's name and ids). Deterministic, so that workflow code may use it too.
 */
import type { ExecutionInput, PreparedRun } from './messages.js';
import {
  TrellisDryRun,
  TrellisExecutionId,
  TrellisProject,
  TrellisStatus,
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
 * runs does not starve another's. Where the namespace has them (`has`), its project's name and
 * its status are attributes too: a run starts `Running` and upserts `TrellisStatus` only when
 * that changes. `prepared`: the run the API prepared, which starts on its tasks at once.
 */
export function executionRunOptions(
  execution: ExecutionRun,
  has: AttributesOfNamespace,
  prepared?: PreparedRun,
) {
  const input: ExecutionInput = { executionId: execution.id, ...(prepared ? { prepared } : {}) };
  return {
    priority: { fairnessKey: execution.projectId },
    args: [input] as [ExecutionInput],
    typedSearchAttributes: [
      { key: TrellisWorkflowId, value: execution.workflowId },
      { key: TrellisWorkflowName, value: execution.workflowName },
      { key: TrellisExecutionId, value: execution.id },
      ...projectAttributes(has.project ? execution.project : undefined),
      ...startStatusAttributes(has.status),
      ...(execution.dryRun === true && has.dryRun ? [{ key: TrellisDryRun, value: true }] : []),
    ],
    staticSummary: runSummary(execution.workflowName),
    staticDetails: runDetails({ ...execution, executionId: execution.id }),
  };
}

/** Which of the optional Trellis search attributes the run's namespace has. */
export interface AttributesOfNamespace {
  /** `TrellisProject`. */
  project: boolean;
  /** `TrellisStatus`. */
  status: boolean;
  /** `TrellisDryRun`: dry runs carry it (absent: not set). */
  dryRun?: boolean;
}

/** `TrellisStatus` as a run starts (`Running`), or nothing when the namespace lacks it. */
export function startStatusAttributes(status: boolean) {
  return status ? [{ key: TrellisStatus, value: 'Running' }] : [];
}

/** `TrellisProject` with the project's name, or nothing when the namespace lacks it (undefined). */
export function projectAttributes(project: string | undefined) {
  return project === undefined ? [] : [{ key: TrellisProject, value: project }];
}
