/** The workflows the worker bundles: Trellis has one, the DAG interpreter. */
export { trellisExecution } from './execution-workflow.js';
