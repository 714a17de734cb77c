import type { ExecutionInput, ExecutionOutcome } from '#protocol/messages.js';

/**
 * The signature of the `trellisExecution` workflow: what a run that starts another one as its
 * child (subworkflow.ts) needs of it, without importing the workflow itself.
 */
export type ExecutionWorkflow = (input: ExecutionInput) => Promise<ExecutionOutcome>;
