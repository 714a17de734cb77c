/** The tables of workflows: their definitions, revisions, triggers and webhook deliveries. */
import type { ColumnType, Selectable } from 'kysely';
import type { Timestamp, CreatedAt, Json } from './columns.js';
import type { ProjectIdColumn } from './projects.js';

export interface WorkflowTable {
  id: string;
  projectId: ProjectIdColumn;
  /** Unique within its project. */
  name: string;
  /** The definition exactly as the client sent it. */
  definition: string;
  createdAt: CreatedAt;
  modifiedDate: Timestamp;
  /** The number of the current definition's revision (`workflow_revision`). */
  revision: ColumnType<number, number | undefined, number>;
  /**
   * A draft: the holder of the test runs of a definition not stored (`POST /workflows/tests`),
   * shown nowhere, removed after this time once its runs ended. Null for every stored workflow.
   */
  draftUntil: ColumnType<Date | null, Date | null | undefined, never>;
}
/** Every definition a workflow has had: revision 1 when added, one more at each update. */
export interface WorkflowRevisionTable {
  workflowId: string;
  revision: number;
  /** The definition's name. */
  name: string;
  /** The definition exactly as the client sent it. */
  definition: string;
  createdAt: CreatedAt;
  /** Where the definition came from, as `apply` was told (a Git commit); null otherwise. */
  source: ColumnType<string | null, string | null | undefined, never>;
}
export type TriggerType = 'Manual' | 'TimeBased' | 'Webhook';
export interface WorkflowTriggerTable {
  id: string;
  workflowId: string;
  type: TriggerType;
  status: 'Active' | 'DeActive';
  /** As the client sent them, without a Webhook trigger's secret (which is `secret`). */
  properties: Json<Record<string, unknown>>;
  /** A Webhook trigger's signing secret, encrypted (`enc:v2:...`); null for any other. */
  secret: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * The user who created or last changed it, or asked for its latest backfill: the starter of
   * the runs it fires, for approvals' self-approval rule. Null for triggers from before it was
   * recorded.
   */
  changedBy: ColumnType<string | null, string | null | undefined, string | null>;
  createdAt: CreatedAt;
  lastModified: Timestamp;
}
/** A webhook delivery received: its `webhook-id` starts one execution, once. */
export interface WebhookDeliveryTable {
  triggerId: string;
  webhookId: string;
  executionId: string;
  receivedAt: CreatedAt;
}
/**
 * A webhook delivery its trigger refused (4xx): why, never its body. Only the newest of each
 * trigger are kept.
 */
export interface WebhookRefusalTable {
  id: string;
  triggerId: string;
  /** The sender's `webhook-id`, as sent (at most 255 characters); null without one. */
  webhookId: string | null;
  receivedAt: CreatedAt;
  /** The HTTP status the delivery was answered with. */
  status: number;
  /** The answer's error code (`webhook.signature_invalid`, ...). */
  code: string;
  /** The answer's message. */
  reason: string;
}

export type WorkflowRow = Selectable<WorkflowTable>;
export type WorkflowRevisionRow = Selectable<WorkflowRevisionTable>;
export type WorkflowTriggerRow = Selectable<WorkflowTriggerTable>;
