import type { PluginTable, PluginConfigurationTable } from './tables/plugins.js';
import type {
  WorkflowTable,
  WorkflowRevisionTable,
  WorkflowTriggerTable,
  WebhookDeliveryTable,
  WebhookRefusalTable,
} from './tables/workflows.js';
import type {
  WorkflowExecutionTable,
  TaskExecutionTable,
  LogEntryTable,
  ExecutionEventTable,
  ConcurrencySlotTable,
} from './tables/executions.js';
import type {
  ApprovalTable,
  NotificationDeliveryTable,
  ApprovalLinkTable,
} from './tables/approvals.js';
import type {
  ProjectTable,
  ProjectMemberTable,
  ProjectRequestRateTable,
} from './tables/projects.js';
import type { ServerSecretTable, IdempotencyKeyTable, AuthFailureTable } from './tables/server.js';
import type { AuditEntryTable } from './tables/audit.js';
import type { ApiKeyTable } from './tables/api-keys.js';

/**
 * The database schema as Kysely sees it. Migrations in `migrations/` create exactly this;
 * repositories use `Selectable<XTable>` row types.
 *
 * Timestamps are `timestamptz`, read back as `Date`. JSON columns are `jsonb`.
 */
export interface Database {
  project: ProjectTable;
  projectMember: ProjectMemberTable;
  projectRequestRate: ProjectRequestRateTable;
  apiKey: ApiKeyTable;
  plugin: PluginTable;
  pluginConfiguration: PluginConfigurationTable;
  workflow: WorkflowTable;
  workflowRevision: WorkflowRevisionTable;
  workflowTrigger: WorkflowTriggerTable;
  webhookDelivery: WebhookDeliveryTable;
  webhookRefusal: WebhookRefusalTable;
  workflowExecution: WorkflowExecutionTable;
  taskExecution: TaskExecutionTable;
  approval: ApprovalTable;
  logEntry: LogEntryTable;
  idempotencyKey: IdempotencyKeyTable;
  authFailure: AuthFailureTable;
  executionEvent: ExecutionEventTable;
  concurrencySlot: ConcurrencySlotTable;
  notificationDelivery: NotificationDeliveryTable;
  approvalLink: ApprovalLinkTable;
  serverSecret: ServerSecretTable;
  auditEntry: AuditEntryTable;
}

export type * from './tables/plugins.js';
export type * from './tables/workflows.js';
export type * from './tables/executions.js';
export type * from './tables/approvals.js';
export type * from './tables/server.js';
export type * from './tables/audit.js';
export type * from './tables/projects.js';
export type * from './tables/api-keys.js';
