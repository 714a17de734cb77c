/**
 * Which of the versioned behaviours of patches.ts a run has. A run of `trellisExecution` asks
 * Temporal at the point each behaviour first matters (`patched`, which records a marker the first
 * time); the calls stay exactly where they were, so every recorded history replays. A run of
 * `trellisExecutionV2` started clean: it has every behaviour of the first type without asking. Passed
 * down explicitly: workflow module state may be shared between runs.
 */
import { patched } from '@temporalio/workflow';
import { executionWorkflowType, firstExecutionWorkflowType } from '#protocol/messages.js';
import { patches } from './patches.js';

export interface RunVersion {
  has(patch: keyof typeof patches): boolean;
  /**
   * The run is a `trellisExecutionV2`: it started with its `TrellisStatus` among its start
   * attributes (where the namespace has it), so it upserts the attribute only when its status
   * changes, and its subworkflow children are of its own type.
   */
  readonly startedClean: boolean;
  /** The workflow type of the run, which its subworkflow children are of too. */
  readonly workflowType: string;
}

/** A run of `trellisExecution`: each behaviour as its history says, or from now on. */
export const patchedRun: RunVersion = {
  has: (patch) => patched(patches[patch].id),
  startedClean: false,
  workflowType: firstExecutionWorkflowType,
};

/**
 * The behaviours a `trellisExecutionV2` run has from its start, without asking: every patch of
 * `trellisExecution`. Frozen: a patch added to the registry later is asked with `patched` by
 * runs of this type too, so that the ones started before it replay.
 */
export const builtIntoV2: ReadonlySet<keyof typeof patches> = new Set([
  'outputs',
  'rerun',
  'approvalDecisions',
  'temporalUi',
  'concurrency',
  'foreach',
  'subworkflows',
  'notifications',
  'boundedWorkflowTasks',
  'childProject',
] as const);

/** A run of `trellisExecutionV2`: what the type started with, and later patches as asked. */
export const cleanRun: RunVersion = {
  has: (patch) => builtIntoV2.has(patch) || patched(patches[patch].id),
  startedClean: true,
  workflowType: executionWorkflowType,
};
