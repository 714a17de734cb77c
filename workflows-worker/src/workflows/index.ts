/** The workflows the worker bundles: the DAG interpreter, and a forEach task's chunk of items. */
export { trellisExecution, trellisExecutionV2 } from './execution-workflow.js';
export { trellisForEachChunk } from './foreach.js';
