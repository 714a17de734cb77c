import * as notificationRepository from '#store/notification-repository.js';
import type { DeliveryRow } from '#store/notification-repository.js';
import type { HandlerMap } from '../handler.js';
import { cursorListReply, requestedSlice } from '../lists.js';

function toDelivery(row: DeliveryRow) {
  return {
    id: row.id,
    eventId: row.eventId,
    event: row.event,
    url: row.url,
    executionId: row.executionId,
    approvalId: row.approvalId,
    attempt: row.attempt,
    outcome: row.outcome,
    statusCode: row.statusCode,
    error: row.error,
    attemptedAt: row.attemptedAt.toISOString(),
  };
}

/** Notifications: the delivery log (`GET /notifications/deliveries`, admin). */
export const notificationHandlers = {
  listNotificationDeliveries: async ({ deps, project, query }) => {
    const paged = await notificationRepository.listDeliveries(deps.db, {
      projectId: project.id,
      ...(query.eventId !== undefined ? { eventId: query.eventId } : {}),
      ...(query.executionId !== undefined ? { executionId: query.executionId } : {}),
      slice: requestedSlice(query),
    });
    return cursorListReply(paged, query, toDelivery);
  },
} satisfies Partial<HandlerMap>;
