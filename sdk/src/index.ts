/**
 * @trellis/sdk: a typed client for the Trellis API on openapi-fetch. Paths, parameters, bodies
 * and results are typed from the API's OpenAPI document (`paths`, `components`, `operations`).
 */
// `createClient` is the name the projects' documentation uses; both are the same function.
export { createTrellisClient, createTrellisClient as createClient } from './client.js';
export type {
  Approval,
  ApprovalStatus,
  BulkSelection,
  ClientPaths,
  ExecutionDetail,
  ExecutionStarted,
  ExecutionStatus,
  ListItem,
  Page,
  Pagination,
  PathsWith,
  ResponseData,
  SuccessBody,
  TrellisClient,
  TrellisClientOptions,
  WaitOptions,
} from './client.js';
export type { ExecutionEvent, WatchOptions } from './watch.js';
export { defineWorkflow } from './definition.js';
export type {
  CheckedDefinition,
  ConfiguredTask,
  Expression,
  PluginParameters,
  PluginTask,
  PluginType,
  WithExpressions,
  WorkflowDefinition,
  WorkflowTask,
} from './definition.js';
export type * from './generated/plugin-types.js';
export { TrellisApiError } from './errors.js';
export { basicAuthorization, type Credentials } from './auth.js';
export type { components, operations, paths } from './generated/schema.js';
