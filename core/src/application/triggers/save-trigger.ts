/**
 * Saving a trigger: what to store for it (its properties checked, a webhook's secret taken out
 * and encrypted) and its Temporal schedule kept in step with its row.
 */
import type { Kysely } from 'kysely';
import type { TriggerInput } from '#store/trigger-repository.js';
import type { Database, WorkflowRow, WorkflowTriggerRow } from '#store/tables.js';
import type { TrellisConfig } from '#platform/config/types.js';
import type { TemporalClient } from '#platform/temporal/connection.js';
import { Conflict, Invalid, NotFound } from '#definition/errors.js';
import * as triggerRepository from '#store/trigger-repository.js';
import { problemAt } from '#definition/validation/problem.js';
import { parseDefinition } from '#definition/parse.js';
import { secretKeys } from '#plugin-host/secret-keys.js';
import {
  checkTimeBasedProperties,
  syncTriggerSchedule,
  triggerInputs,
  type ScheduleWorkflow,
} from './schedules.js';
import {
  checkWebhookProperties,
  generateWebhookSecret,
  withoutSecret,
} from './webhook-properties.js';

export interface TriggerDeps {
  db: Kysely<Database>;
  temporal: TemporalClient;
  config: TrellisConfig;
}

/** Where a request gives a trigger's properties. */
const PROPERTIES_AT = ['body', 'properties'];

/** What to store for a trigger, and the secret generated for it (to show once) if any. */
export interface PreparedTrigger {
  input: TriggerInput;
  generatedSecret?: string;
}

/**
 * The trigger a create or update body describes, without its ids; 400 naming each problem of a
 * TimeBased trigger's cron, time zone and schedule policies and of the inputs it gives the
 * workflow's runs, and of a Webhook trigger's signature and secret. A Webhook trigger's secret
 * is taken out of its properties and encrypted; one that signs and has none gets a new one on
 * creation, and keeps the one it has on update (`existing`).
 */
export async function prepareTrigger(
  deps: TriggerDeps,
  body: TriggerInput,
  workflow: WorkflowRow,
  existing?: WorkflowTriggerRow,
): Promise<PreparedTrigger> {
  const input: TriggerInput = {
    type: body.type,
    status: body.status,
    properties: body.properties,
    secret: null,
  };
  if (input.type === 'TimeBased') {
    const problems = checkTimeBasedProperties(input.properties, PROPERTIES_AT);
    const parsed = parseDefinition(workflow.definition);
    if (parsed.ok) {
      const inputs = triggerInputs(input.properties, parsed.definition, PROPERTIES_AT);
      if (!inputs.ok) problems.push(...inputs.problems);
    }
    if (problems.length > 0) throw new Invalid(problems);
    return { input };
  }
  if (input.type !== 'Webhook') return { input };

  const checked = checkWebhookProperties(input.properties, PROPERTIES_AT);
  if (!checked.ok) throw new Invalid(checked.problems);
  input.properties = withoutSecret(input.properties);
  if (checked.signature === 'None') return { input };
  const keys = await secretKeys(deps.config);
  if (checked.secret.kind === 'given') {
    return { input: { ...input, secret: keys.encrypt(checked.secret.secret) } };
  }
  if (existing?.secret) {
    // Kept; encrypted again when a previous key encrypted it (a key rotation reaching it).
    const { value, current } = keys.decrypt('secret', existing.secret);
    return { input: { ...input, secret: current ? existing.secret : keys.encrypt(value) } };
  }
  if (existing) {
    throw new Invalid(
      problemAt(
        'body.properties.secret',
        'is required to sign with "StandardWebhooks" (a secret is generated only when a trigger is created)',
        'validation.required',
      ),
    );
  }
  const generatedSecret = generateWebhookSecret();
  return { input: { ...input, secret: keys.encrypt(generatedSecret) }, generatedSecret };
}

/**
 * A new signing secret for a Webhook trigger that signs with `StandardWebhooks`: generated,
 * stored encrypted in place of the old one (which stops verifying at once), and returned to be
 * shown once. `Conflict` for any other trigger.
 */
export async function rotateWebhookSecret(
  deps: TriggerDeps,
  trigger: WorkflowTriggerRow,
  changedBy: string,
): Promise<string> {
  if (trigger.type !== 'Webhook' || trigger.secret === null) {
    throw new Conflict(
      `Trigger "${trigger.id}" has no signing secret to rotate: only a Webhook trigger with signature "StandardWebhooks" has one.`,
      { code: 'trigger.no_secret' },
    );
  }
  const secret = generateWebhookSecret();
  const keys = await secretKeys(deps.config);
  const stored = await triggerRepository.replaceSecret(deps.db, trigger.workflowId, trigger.id, {
    secret: keys.encrypt(secret),
    changedBy,
  });
  if (!stored)
    throw new NotFound(`Trigger "${trigger.id}" was not found.`, { code: 'trigger.not_found' });
  return secret;
}

/**
 * Runs a call on a trigger's schedule; when Temporal has lost the schedule (drift the start-up
 * reconcile would repair), makes it again from the trigger and runs the call once more.
 */
export async function onSchedule<T>(
  deps: TriggerDeps,
  trigger: WorkflowTriggerRow,
  workflow: ScheduleWorkflow,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof NotFound) || error.problems[0]?.code !== 'schedule.not_found')
      throw error;
    await syncTriggerSchedule(deps.temporal, deps.config, trigger, workflow);
    return call();
  }
}

/**
 * Writes a trigger and makes its Temporal schedule match, atomically as far as the client can
 * see: the row is written in a transaction that commits only after Temporal accepted the
 * schedule, so a 503 (or a cron Temporal rejects) leaves nothing changed.
 */
export async function writeTrigger(
  deps: TriggerDeps,
  workflow: ScheduleWorkflow,
  write: (trx: Kysely<Database>) => Promise<WorkflowTriggerRow>,
): Promise<WorkflowTriggerRow> {
  return deps.db.transaction().execute(async (trx) => {
    const row = await write(trx);
    await syncTriggerSchedule(deps.temporal, deps.config, row, workflow);
    return row;
  });
}
