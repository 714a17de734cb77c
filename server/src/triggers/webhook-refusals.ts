import type { Logger } from '#platform/logging.js';
import { isUuid } from '#store/ids.js';
import * as triggerRepository from '#store/trigger-repository.js';
import * as webhookDeliveryRepository from '#store/webhook-delivery-repository.js';
import type { AppDeps } from '../handler.js';
import { toHttpError } from '../errors.js';
import { header, type Req } from '../request-context.js';

/** The longest reason kept: an answer's message, which may quote what the sender sent. */
const reasonLength = 1000;

/** The trigger a `/hooks/{triggerId}` request is for, by its path (before routing, for a 413). */
const hookPath = /^\/hooks\/([^/]+)\/?$/;

/**
 * Records a delivery its Webhook trigger refused (4xx) in the trigger's delivery log: the answer's
 * status, code and message, the sender's `webhook-id`, never the body. Not for an id that names
 * no Webhook trigger (nothing a project can read learns of it), nor for the rate limit's 429 (a
 * flood would write a row a request; the log keeps the newest refusals anyway). Never throws:
 * the delivery's answer does not depend on it.
 */
export async function logRefusedDelivery(
  deps: Pick<AppDeps, 'db' | 'config'>,
  log: Pick<Logger, 'warn'>,
  req: Req,
  error: unknown,
): Promise<void> {
  const triggerId = hookPath.exec(req.path)?.[1];
  if (req.method !== 'POST' || triggerId === undefined || !isUuid(triggerId)) return;
  const refusal = toHttpError(error, deps.config.Server.BodyLimitBytes);
  if (!refusal || refusal.status < 400 || refusal.status > 499 || refusal.status === 429) return;
  try {
    const trigger = await triggerRepository.findAnywhere(deps.db, triggerId);
    if (!trigger || trigger.type !== 'Webhook') return;
    const paused = trigger.status !== 'Active' && refusal.status === 404;
    const webhookId = header(req, 'webhook-id');
    await webhookDeliveryRepository.recordRefusal(deps.db, {
      triggerId: trigger.id,
      webhookId: webhookId === undefined || webhookId === '' ? null : webhookId.slice(0, 255),
      status: refusal.status,
      code: paused ? 'trigger.paused' : (refusal.problems[0]?.code ?? 'request.malformed'),
      reason: paused
        ? 'The trigger is paused (DeActive): its deliveries are answered 404 and start nothing until it is active again.'
        : refusal.messages.join('; ').slice(0, reasonLength),
    });
  } catch (failure) {
    log.warn({ err: failure, triggerId }, 'a refused webhook delivery could not be logged');
  }
}
