/**
 * Notification events (`Notifications.Webhooks`): what the run sends, and what each delivery
 * activity is given. Types and constants only: the workflow bundle imports this module.
 */
/** What a notification tells. */
export type NotificationEvent = 'ApprovalRequested' | 'ExecutionFailed' | 'ExecutionCompleted';

/**
 * The webhooks a run notifies, by URL with the events each takes, and how often a delivery is
 * tried: decided when the run is prepared (from the worker's configuration), so that a replay
 * sends the same. Absent when no webhook is configured.
 */
export interface NotifyTargets {
  webhooks: Array<{ url: string; events: NotificationEvent[] }>;
  maxAttempts: number;
}

/** One event to deliver to one webhook. */
export interface NotificationInput {
  /** The `webhook-id`: the same on every attempt. */
  eventId: string;
  event: NotificationEvent;
  url: string;
  executionId: string;
  /** The approval of an `ApprovalRequested` event. */
  approvalId?: string;
}

/** What a webhook receives (the JSON body). */
export interface NotificationPayload {
  type: NotificationEvent;
  /** The event's id, as in `webhook-id`. */
  id: string;
  /** When the event happened (ISO 8601). */
  timestamp: string;
  data: {
    workflowId: string;
    workflowName: string;
    executionId: string;
    status: string;
    message: string;
    approval?: {
      id: string;
      taskName: string;
      comment: string;
      requestedAt: string;
      /** The values the approver gives (`manualApproval.inputs`); empty when none. */
      form: Record<string, unknown>;
      /** Decides this approval once, until `expiresAt`, without other credentials. */
      link: { url: string; expiresAt: string };
    };
  };
}
