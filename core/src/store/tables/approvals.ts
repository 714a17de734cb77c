/** The tables of approvals and what reaches people about them: notifications and links. */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Approvers, InputDeclaration } from '#definition/types.js';
import type { NotificationEvent } from '#protocol/notifications.js';
import type { ApprovalStatus } from '#protocol/statuses.js';
import type { Timestamp } from './columns.js';

/** What an approval that times out does (`manualApproval.onTimeout`). */
export type ApprovalTimeoutAction = 'Approve' | 'Reject';
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
export type { NotificationEvent };
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

export type ApprovalRow = Selectable<ApprovalTable>;
