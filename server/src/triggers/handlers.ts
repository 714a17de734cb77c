import * as triggerRepository from '#store/trigger-repository.js';
import type { WorkflowTriggerRow } from '#store/tables.js';
import { Conflict, Invalid, NotFound } from '#definition/errors.js';
import { problemAt } from '#definition/validation/problem.js';
import { REDACTED } from '#plugin-host/settings.js';
import {
  onSchedule,
  prepareTrigger,
  rotateWebhookSecret,
  writeTrigger,
} from '#application/triggers/save-trigger.js';
import * as webhookDeliveryRepository from '#store/webhook-delivery-repository.js';
import { normalizePage } from '#store/paging.js';
import {
  backfillSchedule,
  deleteTriggerSchedule,
  upcomingFirings,
  projectClient,
} from '#application/triggers/schedules.js';
import type { AppDeps, HandlerMap } from '../handler.js';
import { confirmation } from '../handler.js';
import { listReply, pageInMemory } from '../lists.js';
import { assertSameId, findWorkflow } from '../workflows/handlers.js';
import { webhookHandlers } from './webhooks.js';

const triggerNotFound = (workflowId: string, triggerId: string) =>
  new NotFound(`Trigger "${triggerId}" was not found on workflow "${workflowId}".`, {
    code: 'trigger.not_found',
  });

function toTrigger(row: WorkflowTriggerRow) {
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    // A Webhook trigger's secret is never shown; that there is one is.
    properties: row.secret === null ? row.properties : { ...row.properties, secret: REDACTED },
    lastModified: row.lastModified.toISOString(),
  };
}

async function findTrigger(
  deps: AppDeps,
  params: { workflowId: string; triggerId: string },
): Promise<WorkflowTriggerRow> {
  const row = await triggerRepository.findById(deps.db, params.workflowId, params.triggerId);
  if (!row) throw triggerNotFound(params.workflowId, params.triggerId);
  return row;
}

/** The trigger in the path when it is TimeBased; 409 for any other type. */
async function findTimeBased(
  deps: AppDeps,
  params: { workflowId: string; triggerId: string },
  action: string,
): Promise<WorkflowTriggerRow> {
  const trigger = await findTrigger(deps, params);
  if (trigger.type !== 'TimeBased') {
    throw new Conflict(
      `Trigger "${trigger.id}" is a ${trigger.type} trigger; only a TimeBased trigger has a schedule to ${action}.`,
      { code: 'trigger.not_time_based' },
    );
  }
  return trigger;
}

/**
 * `/workflows/{workflowId}/triggers`: Manual, TimeBased (Temporal Schedule) and Webhook triggers;
 * and `/hooks/{triggerId}`, where Webhook triggers fire (`webhooks.ts`).
 */
export const triggerHandlers = {
  listTriggers: async ({ deps, project, params, query }) => {
    await findWorkflow(deps, project, params.workflowId);
    const rows = await triggerRepository.listByWorkflow(deps.db, params.workflowId);
    return listReply(pageInMemory(rows, query), query, toTrigger);
  },

  getTrigger: async ({ deps, project, params }) => {
    await findWorkflow(deps, project, params.workflowId);
    return { data: toTrigger(await findTrigger(deps, params)) };
  },

  createTrigger: async ({ deps, project, params, body, user }) => {
    assertSameId('workflowId', body.workflowId, params.workflowId);
    const workflow = await findWorkflow(deps, project, params.workflowId);
    const { input, generatedSecret } = await prepareTrigger(deps, body, workflow);
    const row = await writeTrigger(deps, { ...workflow, project: project.name }, (trx) =>
      triggerRepository.insert(trx, workflow.id, { ...input, changedBy: user.name }),
    );
    return {
      data: { triggerId: row.id, ...(generatedSecret ? { secret: generatedSecret } : {}) },
      messages: [
        `${row.type} trigger was created for workflow "${workflow.name}".`,
        ...(generatedSecret
          ? ['Its signing secret is in data.secret, shown this once: keep it now.']
          : []),
      ],
    };
  },

  updateTrigger: async ({ deps, project, params, body, user }) => {
    assertSameId('workflowId', body.workflowId, params.workflowId);
    assertSameId('triggerId', body.triggerId, params.triggerId);
    const workflow = await findWorkflow(deps, project, params.workflowId);
    const existing = await findTrigger(deps, params);
    const { input } = await prepareTrigger(deps, body, workflow, existing);
    await writeTrigger(deps, { ...workflow, project: project.name }, async (trx) => {
      const row = await triggerRepository.update(trx, workflow.id, params.triggerId, {
        ...input,
        changedBy: user.name,
      });
      if (!row) throw triggerNotFound(params.workflowId, params.triggerId);
      return row;
    });
    return confirmation(
      `Trigger "${params.triggerId}" of workflow "${workflow.name}" was updated.`,
    );
  },

  deleteTrigger: async ({ deps, project, params }) => {
    const workflow = await findWorkflow(deps, project, params.workflowId);
    await deps.db.transaction().execute(async (trx) => {
      if (!(await triggerRepository.remove(trx, workflow.id, params.triggerId))) {
        throw triggerNotFound(params.workflowId, params.triggerId);
      }
      await deleteTriggerSchedule(
        projectClient(deps.temporal, deps.config, project.name),
        params.triggerId,
      );
    });
    return confirmation(
      `Trigger "${params.triggerId}" of workflow "${workflow.name}" was deleted.`,
    );
  },

  backfillTrigger: async ({ deps, project, params, body, user }) => {
    const workflow = await findWorkflow(deps, project, params.workflowId);
    const trigger = await findTimeBased(deps, params, 'backfill');
    if (trigger.status !== 'Active') {
      throw new Conflict(
        `Trigger "${trigger.id}" is DeActive: it does not fire, backfills included, until it is Active again.`,
        { code: 'trigger.inactive' },
      );
    }
    const from = new Date(body.from);
    const to = new Date(body.to);
    const problems = [
      ...(from < to ? [] : [problemAt('body.to', `must be after body.from (${body.from})`)]),
      ...(to.getTime() <= Date.now() ? [] : [problemAt('body.to', 'must not be in the future')]),
    ];
    if (problems.length > 0) throw new Invalid(problems);
    const overlap = body.overlap ?? 'BufferAll';
    // Before the firings are asked for, so that the runs they start count the requester as their
    // starter; put back when none is.
    await triggerRepository.recordChangedBy(deps.db, workflow.id, trigger.id, user.name);
    let times;
    try {
      times = await onSchedule(deps, trigger, { ...workflow, project: project.name }, () =>
        backfillSchedule(
          projectClient(deps.temporal, deps.config, project.name),
          trigger.id,
          { from, to },
          overlap,
        ),
      );
    } catch (error) {
      await triggerRepository.recordChangedBy(deps.db, workflow.id, trigger.id, trigger.changedBy);
      throw error;
    }
    return {
      status: 202,
      data: {
        triggerId: trigger.id,
        from: from.toISOString(),
        to: to.toISOString(),
        overlap,
        times: times.map((time) => time.toISOString()),
      },
      messages: [
        `Backfill of ${times.length} firing${times.length === 1 ? '' : 's'} of trigger "${trigger.id}" (overlap ${overlap}) was requested.`,
      ],
    };
  },

  listUpcomingFirings: async ({ deps, project, params, query }) => {
    const workflow = await findWorkflow(deps, project, params.workflowId);
    const trigger = await findTimeBased(deps, params, 'preview');
    if (trigger.status !== 'Active') {
      return {
        data: { triggerId: trigger.id, paused: true, times: [] },
        messages: ['The trigger is DeActive: nothing fires until it is Active again.'],
      };
    }
    const times = await onSchedule(deps, trigger, { ...workflow, project: project.name }, () =>
      upcomingFirings(
        projectClient(deps.temporal, deps.config, project.name),
        trigger.id,
        query.count ?? 5,
      ),
    );
    return {
      data: {
        triggerId: trigger.id,
        paused: false,
        times: times.map((time) => time.toISOString()),
      },
    };
  },

  rotateWebhookSecret: async ({ deps, project, params, user }) => {
    await findWorkflow(deps, project, params.workflowId);
    const trigger = await findTrigger(deps, params);
    const secret = await rotateWebhookSecret(deps, trigger, user.name);
    return {
      data: { triggerId: trigger.id, secret },
      messages: [
        'The new signing secret is in data.secret, shown this once: keep it now. The previous one no longer verifies.',
      ],
    };
  },

  listWebhookDeliveries: async ({ deps, project, params, query }) => {
    await findWorkflow(deps, project, params.workflowId);
    const trigger = await findTrigger(deps, params);
    if (trigger.type !== 'Webhook') {
      throw new Conflict(
        `Trigger "${trigger.id}" is a ${trigger.type} trigger; only a Webhook trigger receives deliveries.`,
        { code: 'trigger.not_webhook' },
      );
    }
    const deliveries = await webhookDeliveryRepository.listDeliveries(deps.db, trigger.id, {
      after: query.after,
      limit: normalizePage(query).pageSize,
    });
    return {
      data: deliveries.map(({ receivedAt, webhookId, ...delivery }) => ({
        ...delivery,
        ...(webhookId === null ? {} : { webhookId }),
        receivedAt: receivedAt.toISOString(),
      })),
    };
  },

  ...webhookHandlers,
} satisfies Partial<HandlerMap>;
