import type { WorkflowExecutionRow } from '#store/tables.js';
import type { TaskDefinition, WorkflowDefinition } from '#definition/types.js';

/**
 * The definition an execution runs, parsed from its snapshot once per worker process: the
 * snapshot never changes, and parsing a 2,000-task definition for every task attempt would
 * dominate a run. It is validated again, within this worker's `Definitions` limits: a snapshot
 * that is no longer valid (stored before the limits, or under larger ones) is `Invalid`, which
 * no retry fixes.
 */
export interface LoadedDefinition {
  execution: Pick<
    WorkflowExecutionRow,
    | 'id'
    | 'projectId'
    | 'workflowId'
    | 'workflowName'
    | 'inputs'
    | 'dryRun'
    | 'dryRunMocks'
    | 'dryRunTestCase'
  >;
  definition: WorkflowDefinition;
  tasks: Map<string, TaskDefinition>;
  /** Per task: the tasks whose outputs its parameters and condition read. */
  reads: Map<string, string[]>;
}
