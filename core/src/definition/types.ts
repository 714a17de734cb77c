/**
 * A workflow definition after parsing: keys in their canonical spelling (the JSON text is read
 * case-insensitively), defaults not yet applied. The types are generated from the contract in
 * spec/definition/ by `npm run gen`, like the JSON Schema that validates definitions.
 * Types only: Temporal workflow code imports this module.
 */
export type {
  Approvers,
  BackoffStrategy,
  ConcurrencyLimit,
  ConcurrencyOnLimit,
  ErrorHandling,
  ErrorStrategy,
  ExecutionCondition,
  InputDeclaration,
  InputType,
  ManualApproval,
  PluginReference,
  RetryPolicy,
  TaskDefinition,
  TaskType,
  WorkflowConfiguration,
  WorkflowDefinition,
  WorkflowTestCase,
  WorkflowTestExpectation,
} from '../../../generated/workflow-definition.js';
