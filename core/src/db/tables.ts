import type { LogLevel, PluginSpecification } from '@trellis/plugin-kit';
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { Approvers, InputDeclaration } from '../definition/types.js';
import type { ApprovalStatus, ExecutionStatus, TaskStatus } from '../temporal/statuses.js';

/**
 * The database schema as Kysely sees it. Migrations in `migrations/` create exactly this;
 * repositories use `Selectable<XTable>` row types.
 *
 * Timestamps are `timestamptz`, read back as `Date`. JSON columns are `jsonb`.
 */

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Json<T> = ColumnType<T, string, string>;

/** A setting a plugin takes, as its manifest declares it (the plugin contract's type). */
export type PluginSpecificationDescriptor = PluginSpecification;

export interface PluginTable {
  id: string;
  type: string;
  version: string;
  description: string;
  /** The manifest's settings, as an array of descriptors. */
  specifications: Json<PluginSpecificationDescriptor[]>;
  /** JSON Schema of the task `parameters` the plugin takes. */
  parametersSchema: Json<Record<string, unknown>>;
  /** JSON Schema of what the plugin returns (`{}`, the column default, when its manifest does not say). */
  outputSchema: ColumnType<Record<string, unknown>, string | undefined, string>;
  /** `builtin` or `registry`. */
  source: string;
  /** sha256 (hex) of `package`, the content address of the unpacked cache. */
  sha256: string;
  /** The package tarball (gzip'd tar of the plugin folder). */
  package: Buffer;
  installedAt: CreatedAt;
}

export interface PluginConfigurationTable {
  id: string;
  name: string;
  type: string;
  version: string;
  /** Settings; values the manifest marks `secret` are stored encrypted. */
  specifications: Json<Record<string, unknown>>;
  createdAt: CreatedAt;
  modifiedTime: Timestamp | null;
}

export interface WorkflowTable {
  id: string;
  name: string;
  /** The definition exactly as the client sent it. */
  definition: string;
  createdAt: CreatedAt;
  modifiedDate: Timestamp;
  /** The number of the current definition's revision (`workflow_revision`). */
  revision: ColumnType<number, number | undefined, number>;
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

export type { ApprovalStatus, ExecutionStatus, TaskStatus };
/** What an approval that times out does (`manualApproval.onTimeout`). */
export type ApprovalTimeoutAction = 'Approve' | 'Reject';
/** Log entry levels: the ones plugins log at (the plugin contract's), which the engine uses too. */
export type { LogLevel };

export interface WorkflowExecutionTable {
  id: string;
  workflowId: string;
  workflowName: string;
  /** Snapshot of the definition text at start; later edits do not affect the run. */
  definition: string;
  status: ExecutionStatus;
  message: string;
  triggerId: string | null;
  /** Temporal workflow id, derived from the execution id. */
  temporalWorkflowId: string;
  executionStart: Timestamp;
  executionEnd: Timestamp | null;
  /** The inputs the run was given, defaults filled in (JSON); `{}` when it takes none. */
  inputs: ColumnType<Record<string, unknown>, string | undefined, string>;
  /** The definition's `outputs` evaluated when the run completed (JSON); null until then. */
  outputs: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** The execution this one reruns; null for a first run. */
  rerunOf: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * The workflow revision the definition snapshot is; null for a run of a definition replaced
   * before revisions were kept.
   */
  revision: ColumnType<number | null, number | null | undefined, number | null>;
  /**
   * The Temporal run that took this row over after an operator reset the execution's run
   * (Temporal UI or CLI); null while the execution's first run writes it.
   */
  temporalRunId: ColumnType<string | null, string | null | undefined, string | null>;
  /** The execution whose task started this one as a subworkflow; null for any other run. */
  parentExecutionId: ColumnType<string | null, string | null | undefined, string | null>;
  /** That task's row. */
  parentTaskExecutionId: ColumnType<string | null, string | null | undefined, string | null>;
  /** That task's name. */
  parentTaskName: ColumnType<string | null, string | null | undefined, string | null>;
  /** The user who started the run; null for scheduled, webhook and older runs. */
  startedBy: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface TaskExecutionTable {
  id: string;
  executionId: string;
  workflowId: string;
  name: string;
  /** Position of the task in the definition, for stable ordering. */
  position: number;
  status: TaskStatus;
  message: string;
  /** Attempts started so far (0 before the first). */
  attempts: Generated<number>;
  startTime: Timestamp | null;
  endTime: Timestamp | null;
  /** A completed task's output (JSON), read by later tasks' expressions; null otherwise. */
  output: ColumnType<unknown, string | null | undefined, string | null>;
  /**
   * The Temporal run that took this row over after an operator reset the execution's run
   * (Temporal UI or CLI); null while the execution's first run writes it.
   */
  temporalRunId: ColumnType<string | null, string | null | undefined, string | null>;
  /** An item of a forEach task (`Task[3]`): that task's row; null for the definition's tasks. */
  foreachTaskId: ColumnType<string | null, string | null | undefined, string | null>;
  /** An item's position in its task's list (null for the definition's tasks). */
  itemIndex: ColumnType<number | null, number | null | undefined, number | null>;
  /** An item's value, read by `Item()` (JSON; null for the definition's tasks). */
  item: ColumnType<unknown, string | null | undefined, string | null>;
}

export interface ApprovalTable {
  id: string;
  executionId: string;
  taskExecutionId: string;
  taskName: string;
  comment: string;
  status: ApprovalStatus;
  requestedAt: Timestamp;
  /** When `onTimeout` applies if no one decides; null when the approval does not time out. */
  timesOutAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  onTimeout: ColumnType<
    ApprovalTimeoutAction | null,
    ApprovalTimeoutAction | null | undefined,
    ApprovalTimeoutAction | null
  >;
  /** When it was decided or canceled. */
  decidedAt: Timestamp | null;
  /**
   * A user's name (through the API, or the `decidedBy` of an update sent from Temporal), `system`
   * (timed out, or the execution ended) or `temporal` (from Temporal without a name).
   */
  decidedBy: string | null;
  /** Why, as the decider said or the system recorded; null when none was given. */
  reason: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * The Temporal run that took this row over after an operator reset the execution's run
   * (Temporal UI or CLI); null while the execution's first run writes it.
   */
  temporalRunId: ColumnType<string | null, string | null | undefined, string | null>;
  /** The values given with the approval (`manualApproval.inputs`), JSON; null when none. */
  inputs: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** How it was decided; null while pending. */
  decidedVia: ColumnType<
    DecisionChannel | null,
    DecisionChannel | null | undefined,
    DecisionChannel | null
  >;
  /** The notification event whose approval link decided it. */
  decidedViaNotification: ColumnType<string | null, string | null | undefined, string | null>;
  /** `manualApproval.inputs` as declared when asked for (JSON); null when none. */
  form: ColumnType<
    Record<string, InputDeclaration> | null,
    string | null | undefined,
    string | null
  >;
  /** `manualApproval.approvers` as declared when asked for (JSON); null: anyone may decide. */
  approvers: ColumnType<Approvers | null, string | null | undefined, string | null>;
}

/** How an approval was decided. */
export type DecisionChannel = 'Api' | 'Link' | 'Temporal' | 'System';

/** What a notification tells. */
export type NotificationEvent = 'ApprovalRequested' | 'ExecutionFailed' | 'ExecutionCompleted';

/** One attempt to deliver a notification event to a webhook. */
export interface NotificationDeliveryTable {
  id: string;
  seq: Generated<string>;
  eventId: string;
  event: NotificationEvent;
  url: string;
  executionId: string;
  approvalId: string | null;
  attempt: number;
  outcome: 'Delivered' | 'Failed' | 'Abandoned';
  statusCode: number | null;
  error: string | null;
  attemptedAt: Timestamp;
}

/** An approval link sent with a notification: decides its approval once, until it expires. */
export interface ApprovalLinkTable {
  id: string;
  approvalId: string;
  eventId: string;
  expiresAt: Timestamp;
  usedAt: Timestamp | null;
}

/** Secrets the server keeps in the database, shared by every process (the links' HMAC key). */
export interface ServerSecretTable {
  name: string;
  value: string;
}

export interface LogEntryTable {
  id: string;
  executionId: string;
  /** null for execution-level entries. */
  taskExecutionId: string | null;
  /** Monotonic order within the table. */
  seq: Generated<string>;
  /**
   * Idempotency key unique per execution, e.g. `${taskExecutionId}:${attempt}:${n}`, so a
   * retried activity or replayed workflow writing the same entry again inserts nothing.
   */
  dedupeKey: string;
  level: LogLevel;
  message: string;
  exception: string | null;
  timeStamp: Timestamp;
}

/** What an execution event is about. */
export type ExecutionEventType = 'execution' | 'task' | 'log' | 'approval';

/**
 * The event log of an execution, written by database triggers (migration
 * `2026-11-25T00-00-00-execution-events`), never by the application.
 */
export interface ExecutionEventTable {
  executionId: string;
  /** 1, 2, 3... within the execution, in commit order. */
  seq: string;
  type: ExecutionEventType;
  /** The changed row's fields (JSON); null for a log event, whose entry is `logEntryId`. */
  data: Record<string, unknown> | null;
  logEntryId: string | null;
  recordedAt: Date;
}

/** The last event number of each execution; its row lock orders the execution's events. */
export interface ExecutionEventSequenceTable {
  executionId: string;
  lastSeq: string;
}

export interface IdempotencyKeyTable {
  userName: string;
  /** The client's `Idempotency-Key`. */
  key: string;
  /** sha256 of the operation, its parameters and body: what "the same request" means. */
  requestHash: string;
  /** The first response, once there is one; null while the first request runs. */
  responseStatus: number | null;
  response: ColumnType<unknown, string | null | undefined, string | null>;
  createdAt: CreatedAt;
}

/** Failed logins of one user name (`user:<name>`) or client address (`address:<ip>`). */
export interface AuthFailureTable {
  key: string;
  /** Failures since `windowStartedAt`. */
  failures: number;
  windowStartedAt: ColumnType<Date, Date | string | undefined, Date | string>;
  /** Set once `failures` reached the limit: logins are refused until then. */
  lockedUntil: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

/**
 * An execution holding a slot of its workflow's concurrency key, or waiting in line for one
 * (`configuration.concurrency`); the row goes when the execution ends.
 */
export interface ConcurrencySlotTable {
  executionId: string;
  workflowId: string;
  key: string;
  /** The limit of the execution's own definition. */
  slotLimit: number;
  holding: boolean;
  /** Chosen to be canceled by a newer execution (`onLimit: CancelOldest`). */
  preempted: ColumnType<boolean, boolean | undefined, boolean>;
  /** The order of the queue. */
  seq: ColumnType<string, never, never>;
  queuedAt: ColumnType<Date, Date | string | undefined, Date | string>;
  heldAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface Database {
  plugin: PluginTable;
  pluginConfiguration: PluginConfigurationTable;
  workflow: WorkflowTable;
  workflowRevision: WorkflowRevisionTable;
  workflowTrigger: WorkflowTriggerTable;
  webhookDelivery: WebhookDeliveryTable;
  workflowExecution: WorkflowExecutionTable;
  taskExecution: TaskExecutionTable;
  approval: ApprovalTable;
  logEntry: LogEntryTable;
  idempotencyKey: IdempotencyKeyTable;
  authFailure: AuthFailureTable;
  executionEvent: ExecutionEventTable;
  executionEventSequence: ExecutionEventSequenceTable;
  concurrencySlot: ConcurrencySlotTable;
  notificationDelivery: NotificationDeliveryTable;
  approvalLink: ApprovalLinkTable;
  serverSecret: ServerSecretTable;
}

export type PluginRow = Selectable<PluginTable>;
export type NewPlugin = Insertable<PluginTable>;
export type PluginConfigurationRow = Selectable<PluginConfigurationTable>;
export type NewPluginConfiguration = Insertable<PluginConfigurationTable>;
export type PluginConfigurationUpdate = Updateable<PluginConfigurationTable>;
export type WorkflowRow = Selectable<WorkflowTable>;
export type WorkflowRevisionRow = Selectable<WorkflowRevisionTable>;
export type WorkflowTriggerRow = Selectable<WorkflowTriggerTable>;
export type WorkflowExecutionRow = Selectable<WorkflowExecutionTable>;
export type TaskExecutionRow = Selectable<TaskExecutionTable>;
export type ApprovalRow = Selectable<ApprovalTable>;
export type LogEntryRow = Selectable<LogEntryTable>;
