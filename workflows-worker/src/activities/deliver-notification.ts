import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { Webhook } from 'standardwebhooks';
import * as approvalRepository from '#store/approval-repository.js';
import * as executionRepository from '#store/execution-repository.js';
import * as notificationRepository from '#store/notification-repository.js';
import type { TrellisConfig } from '#platform/config/types.js';
import { approvalLinkToken } from '#application/notifications/approval-links.js';
import type { NotificationInput, NotificationPayload } from '#protocol/notifications.js';
import type { EngineDeps } from './deps.js';

/** Where approval links point: the API as receivers reach it. */
function publicUrl(config: TrellisConfig): string {
  const { PublicUrl } = config.Notifications;
  if (PublicUrl) return PublicUrl.replace(/\/+$/, '');
  const { Host, Port } = config.Server;
  return `http://${Host.includes(':') ? `[${Host}]` : Host}:${Port}`;
}

/**
 * Delivers one event to one webhook: a JSON POST signed with Standard Webhooks headers. Each
 * attempt is recorded (the delivery log); a failed one throws, and Temporal tries again with
 * backoff, so a worker that dies mid-delivery loses nothing. An event is the same on every
 * attempt (its id, body and approval link), so a receiver can tell a redelivery by `webhook-id`.
 */
export function deliverNotificationActivity(deps: EngineDeps) {
  const { db, config, logger } = deps;
  return async function deliverNotification(input: NotificationInput): Promise<void> {
    const info = Context.current().info;
    const attempt = info.attempt;
    const last = attempt >= (info.retryPolicy?.maximumAttempts ?? Infinity);
    const record = (
      outcome: 'Delivered' | 'Failed' | 'Abandoned',
      statusCode: number | null,
      error: string | null,
    ) =>
      notificationRepository.recordDeliveryAttempt(db, {
        eventId: input.eventId,
        event: input.event,
        url: input.url,
        executionId: input.executionId,
        approvalId: input.approvalId ?? null,
        attempt,
        outcome,
        statusCode,
        error,
      });
    const log = logger.child({
      component: 'notifications',
      eventId: input.eventId,
      event: input.event,
      url: input.url,
      executionId: input.executionId,
      attempt,
    });
    if ((await executionRepository.findExecution(db, input.executionId))?.dryRun) {
      await record('Abandoned', null, 'A dry run sends no notification.');
      log.info('notification not sent: the execution is a dry run');
      return;
    }
    const webhook = config.Notifications.Webhooks.find(
      (candidate) => candidate.Url === input.url && candidate.Events.includes(input.event),
    );
    if (!webhook) {
      await record('Abandoned', null, 'The webhook is no longer configured for this event.');
      log.warn('notification abandoned: the webhook is no longer configured');
      return;
    }
    const body = JSON.stringify(await payload(input, info.scheduledTimestampMs));
    const now = new Date();
    const signature = new Webhook(webhook.Secret).sign(input.eventId, now, body);
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const response = await fetch(input.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Trellis-Notifications',
          'webhook-id': input.eventId,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([
          AbortSignal.timeout(config.Notifications.TimeoutMilliseconds),
          Context.current().cancellationSignal,
        ]),
      });
      statusCode = response.status;
      await response.body?.cancel();
      if (response.status < 200 || response.status > 299) {
        error = `The receiver answered ${response.status}.`;
      }
    } catch (cause) {
      error = `The receiver could not be reached: ${(cause as Error).message}`;
    }
    if (error === null) {
      await record('Delivered', statusCode, null);
      log.info({ statusCode }, 'notification delivered');
      return;
    }
    await record(last ? 'Abandoned' : 'Failed', statusCode, error);
    log.warn(
      { statusCode, error, last },
      last ? 'notification abandoned' : 'notification failed; retrying',
    );
    throw ApplicationFailure.create({
      type: 'NotificationFailed',
      message: error,
      nonRetryable: last,
    });
  };

  async function payload(
    input: NotificationInput,
    happenedAtMs: number | undefined,
  ): Promise<NotificationPayload> {
    const execution = await executionRepository.findExecution(db, input.executionId);
    if (!execution)
      throw ApplicationFailure.nonRetryable(`Execution ${input.executionId} does not exist`);
    const data: NotificationPayload['data'] = {
      workflowId: execution.workflowId,
      workflowName: execution.workflowName,
      executionId: execution.id,
      status: execution.status,
      message: execution.message,
    };
    const approval =
      input.approvalId !== undefined
        ? await approvalRepository.findApprovalById(db, input.approvalId)
        : undefined;
    if (approval) {
      const link = await approvalLinkToken(db, {
        eventId: input.eventId,
        approvalId: approval.id,
        expiresAt: new Date(
          approval.requestedAt.getTime() + config.Notifications.LinkTtlMinutes * 60_000,
        ),
      });
      data.approval = {
        id: approval.id,
        taskName: approval.taskName,
        comment: approval.comment,
        requestedAt: approval.requestedAt.toISOString(),
        form: approval.form ?? {},
        link: {
          url: `${publicUrl(config)}/approvals/decide/${link.token}`,
          expiresAt: link.expiresAt.toISOString(),
        },
      };
    }
    return {
      type: input.event,
      id: input.eventId,
      timestamp: new Date(happenedAtMs ?? Date.now()).toISOString(),
      data,
    };
  }
}
