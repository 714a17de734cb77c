import type { TriggerInput } from '../../../core/src/db/trigger-repository.js';
import * as triggerRepository from '../../../core/src/db/trigger-repository.js';
import type { WorkflowRow, WorkflowTriggerRow } from '../../../core/src/db/tables.js';
import * as workflowRepository from '../../../core/src/db/workflow-repository.js';
import { Invalid, NotFound } from '../../../core/src/errors.js';
import { parseDefinition } from '../../../core/src/definition/parse.js';
import {
  checkTimeBasedProperties,
  deleteTriggerSchedule,
  syncTriggerSchedule,
  triggerInputs,
} from '../../../core/src/temporal/schedules.js';
import type { AppDeps } from '../handler.js';
import type { HandlerMap } from '../handler.js';
import { confirmation } from '../handler.js';
import { listReply, pageInMemory } from '../lists.js';
import { assertSameId, workflowNotFound } from '../workflows/handlers.js';

const triggerNotFound = (workflowId: string, triggerId: string) =>
  new NotFound(`Trigger "${triggerId}" was not found on workflow "${workflowId}".`, {
    code: 'trigger.not_found',
  });

function toTrigger(row: WorkflowTriggerRow) {
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    properties: row.properties,
    lastModified: row.lastModified.toISOString(),
  };
}

async function findWorkflow(deps: AppDeps, workflowId: string): Promise<WorkflowRow> {
  const workflow = await workflowRepository.findById(deps.db, workflowId);
  if (!workflow) throw workflowNotFound(workflowId);
  return workflow;
}

/**
 * The trigger a create or update body describes, without its ids; 400 naming each problem of a
 * TimeBased trigger's cron and time zone, and of the inputs it gives the workflow's runs.
 */
function triggerInput(body: TriggerInput, workflow: WorkflowRow): TriggerInput {
  const input: TriggerInput = {
    type: body.type,
    status: body.status,
    properties: body.properties,
  };
  if (input.type !== 'TimeBased') return input;
  const problems = checkTimeBasedProperties(input.properties);
  const parsed = parseDefinition(workflow.definition);
  if (parsed.ok) {
    const inputs = triggerInputs(input.properties, parsed.definition, ['properties']);
    if (!inputs.ok) problems.push(...inputs.problems);
  }
  if (problems.length > 0) throw new Invalid(problems.map((problem) => `body.${problem}`));
  return input;
}

/**
 * Writes a trigger and makes its Temporal schedule match, atomically as far as the client can
 * see: the row is written in a transaction that commits only after Temporal accepted the
 * schedule, so a 503 (or a cron Temporal rejects) leaves nothing changed.
 */
async function writeTrigger(
  deps: AppDeps,
  workflow: WorkflowRow,
  write: (trx: AppDeps['db']) => Promise<WorkflowTriggerRow>,
): Promise<WorkflowTriggerRow> {
  return deps.db.transaction().execute(async (trx) => {
    const row = await write(trx);
    await syncTriggerSchedule(deps.temporal.client, deps.config, row, workflow);
    return row;
  });
}

/** `/workflows/{workflowId}/triggers`: Manual and TimeBased (Temporal Schedule) triggers. */
export const triggerHandlers = {
  listTriggers: async ({ deps, params, query }) => {
    await findWorkflow(deps, params.workflowId);
    const rows = await triggerRepository.listByWorkflow(deps.db, params.workflowId);
    return listReply(pageInMemory(rows, query), query, toTrigger);
  },

  getTrigger: async ({ deps, params }) => {
    await findWorkflow(deps, params.workflowId);
    const row = await triggerRepository.findById(deps.db, params.workflowId, params.triggerId);
    if (!row) throw triggerNotFound(params.workflowId, params.triggerId);
    return { data: toTrigger(row) };
  },

  createTrigger: async ({ deps, params, body }) => {
    assertSameId('workflowId', body.workflowId, params.workflowId);
    const workflow = await findWorkflow(deps, params.workflowId);
    const input = triggerInput(body, workflow);
    const row = await writeTrigger(deps, workflow, (trx) =>
      triggerRepository.insert(trx, workflow.id, input),
    );
    return {
      data: { triggerId: row.id },
      messages: [`${row.type} trigger was created for workflow "${workflow.name}".`],
    };
  },

  updateTrigger: async ({ deps, params, body }) => {
    assertSameId('workflowId', body.workflowId, params.workflowId);
    assertSameId('triggerId', body.triggerId, params.triggerId);
    const workflow = await findWorkflow(deps, params.workflowId);
    const input = triggerInput(body, workflow);
    await writeTrigger(deps, workflow, async (trx) => {
      const row = await triggerRepository.update(trx, workflow.id, params.triggerId, input);
      if (!row) throw triggerNotFound(params.workflowId, params.triggerId);
      return row;
    });
    return confirmation(
      `Trigger "${params.triggerId}" of workflow "${workflow.name}" was updated.`,
    );
  },

  deleteTrigger: async ({ deps, params }) => {
    const workflow = await findWorkflow(deps, params.workflowId);
    await deps.db.transaction().execute(async (trx) => {
      if (!(await triggerRepository.remove(trx, workflow.id, params.triggerId))) {
        throw triggerNotFound(params.workflowId, params.triggerId);
      }
      await deleteTriggerSchedule(deps.temporal.client, params.triggerId);
    });
    return confirmation(
      `Trigger "${params.triggerId}" of workflow "${workflow.name}" was deleted.`,
    );
  },
} satisfies Partial<HandlerMap>;
