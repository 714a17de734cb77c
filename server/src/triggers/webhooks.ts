import type { IncomingMessage } from 'node:http';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import * as triggerRepository from '#store/trigger-repository.js';
import type { WorkflowExecutionRow, WorkflowTriggerRow } from '#store/tables.js';
import type { PreparedRun } from '#protocol/messages.js';
import * as webhookDeliveryRepository from '#store/webhook-delivery-repository.js';
import * as workflowRepository from '#store/workflow-repository.js';
import * as executionRepository from '#store/execution-repository.js';
import { NotFound, Unavailable } from '#definition/errors.js';
import { launchExecution } from '#application/executions/launch-execution.js';
import { checkWebhookProperties } from '#application/triggers/webhook-properties.js';
import { HttpError } from '../http-error.js';
import { recordRun, withExecutionLog } from '#application/executions/start-execution.js';
import type { AppDeps, HandlerMap } from '../handler.js';
import { rawBody } from '../raw-body.js';
import { header } from '../request-context.js';
import { noteAudit, noteProjectOf } from '../audit/operations.js';
import { secretKeys } from '#plugin-host/secret-keys.js';

/** What an id that names no Active Webhook trigger answers: the same whatever the reason. */
const hookNotFound = (triggerId: string) =>
  new NotFound(`No active Webhook trigger has the id "${triggerId}".`, {
    code: 'trigger.not_found',
  });

const challenge = { 'WWW-Authenticate': 'StandardWebhooks realm="Trellis"' };

/** 401 for a delivery whose signature does not hold; the code says which part failed. */
function unsigned(error: WebhookVerificationError): HttpError {
  const reason = error.message;
  if (/timestamp too (old|new)/i.test(reason)) {
    return new HttpError(
      401,
      [
        {
          code: 'webhook.stale_timestamp',
          message:
            "webhook-timestamp is more than 5 minutes from the server's clock: sign the delivery again when you send it.",
        },
      ],
      challenge,
    );
  }
  if (/missing required headers|invalid signature headers/i.test(reason)) {
    return new HttpError(
      401,
      [
        {
          code: 'webhook.signature_missing',
          message:
            'The trigger checks Standard Webhooks signatures: send webhook-id, webhook-timestamp (Unix seconds) and webhook-signature.',
        },
      ],
      challenge,
    );
  }
  return new HttpError(
    401,
    [
      {
        code: 'webhook.signature_invalid',
        message:
          'webhook-signature does not match: sign "<webhook-id>.<webhook-timestamp>.<body>" with the trigger\'s secret (HMAC-SHA256, v1).',
      },
    ],
    challenge,
  );
}

/** Verifies a delivery's Standard Webhooks signature over the body's bytes (5-minute tolerance). */
async function verifySignature(deps: AppDeps, trigger: WorkflowTriggerRow, req: IncomingMessage) {
  if (trigger.secret === null) throw new Error(`Webhook trigger ${trigger.id} has no secret`);
  const keys = await secretKeys(deps.config);
  const secret = keys.decrypt('secret', trigger.secret).value as string;
  const headers = Object.fromEntries(
    ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [
      name,
      header(req, name) ?? '',
    ]),
  );
  try {
    new Webhook(secret).verify(rawBody(req), headers, { jsonParse: false });
  } catch (error) {
    if (error instanceof WebhookVerificationError) throw unsigned(error);
    throw error;
  }
}

const limiters = new WeakMap<AppDeps, RateLimiterMemory | null>();

/**
 * Counts a delivery to a trigger; 429 beyond `Security.RateLimits.RequestsPerUserPerMinute` a
 * minute (per API process, as an authenticated user's requests are counted): a public endpoint's
 * caller is known only by the trigger it calls.
 */
async function countDelivery(deps: AppDeps, triggerId: string): Promise<void> {
  const limits = deps.config.Security.RateLimits;
  if (!limiters.has(deps)) {
    limiters.set(
      deps,
      limits.Enabled
        ? new RateLimiterMemory({ points: limits.RequestsPerUserPerMinute, duration: 60 })
        : null,
    );
  }
  try {
    await limiters.get(deps)?.consume(triggerId);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    const seconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
    throw new HttpError(
      429,
      `Too many deliveries to trigger "${triggerId}": at most ${limits.RequestsPerUserPerMinute} a minute (Security.RateLimits.RequestsPerUserPerMinute). Try again in ${seconds} s.`,
      { 'Retry-After': String(seconds) },
    );
  }
}

/** Thrown inside a delivery's transaction when another delivery of its `webhook-id` won. */
class Redelivered extends Error {}

/**
 * The Active Webhook trigger a delivery is for and its workflow, once the delivery is counted
 * and, for a trigger that signs, its signature holds: 404 (the same answer whatever the reason),
 * 429 or 401 otherwise.
 */
async function acceptDelivery(deps: AppDeps, triggerId: string, req: IncomingMessage) {
  const trigger = await triggerRepository.findAnywhere(deps.db, triggerId);
  if (!trigger || trigger.type !== 'Webhook' || trigger.status !== 'Active') {
    throw hookNotFound(triggerId);
  }
  await countDelivery(deps, trigger.id);
  const properties = checkWebhookProperties(trigger.properties);
  if (!properties.ok) throw hookNotFound(triggerId); // stored before a rule it breaks
  if (properties.signature === 'StandardWebhooks') await verifySignature(deps, trigger, req);
  const workflow = await workflowRepository.findById(deps.db, trigger.workflowId);
  if (!workflow) throw hookNotFound(triggerId);
  return { trigger, workflow };
}

/** The execution an earlier delivery of this `webhook-id` started, if any. */
async function earlierExecution(deps: AppDeps, triggerId: string, webhookId: string) {
  const delivery = await webhookDeliveryRepository.findDelivery(deps.db, triggerId, webhookId);
  return delivery && executionRepository.findExecution(deps.db, delivery.executionId);
}

/** `/hooks/{triggerId}`: webhook deliveries, public, each starting one execution. */
export const webhookHandlers = {
  deliverWebhook: async ({ deps, params, body, req, log }) => {
    noteAudit(req, { actor: 'webhook' });
    const { trigger, workflow } = await acceptDelivery(deps, params.triggerId, req);
    await noteProjectOf(req, deps.db, workflow.projectId);
    const webhookId = header(req, 'webhook-id') ?? null;
    const startDeps = withExecutionLog(deps, log);
    // The body is the inputs, and messages name its fields as such (`body.region`).
    const options = {
      triggerId: trigger.id,
      ...(trigger.changedBy !== null ? { startedBy: trigger.changedBy } : {}),
      inputsAt: ['body'],
      ...(body ? { inputs: body } : {}),
    };
    const accepted = (execution: { id: string; executionStart: Date }, redelivery: boolean) => {
      const executionId = execution.id;
      log.info(
        { triggerId: trigger.id, workflowId: workflow.id, webhookId, executionId, redelivery },
        redelivery ? 'webhook redelivered' : 'webhook delivery started an execution',
      );
      return {
        status: 202 as const,
        data: {
          workflowId: workflow.id,
          executionId,
          startedAt: execution.executionStart.toISOString(),
          webhookId,
          redelivery,
        },
        messages: [
          redelivery
            ? `Delivery "${webhookId}" was received before: it started execution "${executionId}", nothing more was started.`
            : `Execution "${executionId}" of workflow "${workflow.name}" was started.`,
        ],
        ...(redelivery ? { headers: { 'Idempotent-Replayed': 'true' } } : {}),
      };
    };

    if (webhookId === null) {
      const { execution, ...known } = await recordRun(startDeps, workflow, options);
      await launchExecution(startDeps, execution, known);
      return accepted(execution, false);
    }
    const earlier = await earlierExecution(deps, trigger.id, webhookId);
    if (earlier) return accepted(earlier, true);
    const delivery = { triggerId: trigger.id, webhookId };
    let execution: WorkflowExecutionRow;
    let known: { prepared?: PreparedRun; project?: string };
    try {
      // The execution and its delivery commit together, or neither does: a concurrent delivery of
      // the same id waits on the delivery's key, then finds this one.
      ({ execution, ...known } = await deps.db.transaction().execute(async (trx) => {
        const recorded = await recordRun({ ...startDeps, db: trx }, workflow, options);
        const recordedDelivery = { ...delivery, executionId: recorded.execution.id };
        if (!(await webhookDeliveryRepository.recordDelivery(trx, recordedDelivery))) {
          throw new Redelivered();
        }
        return recorded;
      }));
    } catch (error) {
      if (!(error instanceof Redelivered)) throw error;
      const winner = await earlierExecution(deps, trigger.id, webhookId);
      if (!winner) throw new Error(`The delivery that won "${webhookId}" has no execution`);
      return accepted(winner, true);
    }
    try {
      await launchExecution(startDeps, execution, known);
    } catch (error) {
      // The run could not start (it is recorded Failed): the sender's retry of this delivery
      // must start one, not find this one.
      if (error instanceof Unavailable) {
        await webhookDeliveryRepository.forgetDelivery(deps.db, {
          ...delivery,
          executionId: execution.id,
        });
      }
      throw error;
    }
    return accepted(execution, false);
  },
} satisfies Partial<HandlerMap>;
