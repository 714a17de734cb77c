import { inspect } from 'node:util';
import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Logger } from '#platform/logging.js';
import * as initial from './migrations/2026-11-22T00-00-00-initial.js';
import * as engine from './migrations/2026-11-22T01-00-00-engine.js';
import * as activeExecutions from './migrations/2026-11-22T02-00-00-active-executions.js';
import * as executionInputs from './migrations/2026-11-24T00-00-00-execution-inputs.js';
import * as executionOutputs from './migrations/2026-11-24T01-00-00-execution-outputs.js';
import * as idempotencyKeys from './migrations/2026-11-24T02-00-00-idempotency-keys.js';
import * as reruns from './migrations/2026-11-24T03-00-00-reruns.js';
import * as pluginOutputSchema from './migrations/2026-11-24T04-00-00-plugin-output-schema.js';
import * as executionEvents from './migrations/2026-11-25T00-00-00-execution-events.js';
import * as approvalDecisions from './migrations/2026-11-25T01-00-00-approval-decisions.js';
import * as authFailures from './migrations/2026-11-25T03-00-00-auth-failures.js';
import * as resetRuns from './migrations/2026-11-26T10-00-00-reset-runs.js';
import * as workflowRevisions from './migrations/2026-11-26T20-00-00-workflow-revisions.js';
import * as webhookTriggers from './migrations/2026-11-26T21-00-00-webhook-triggers.js';
import * as pluginChangeNotifications from './migrations/2026-11-26T30-00-00-plugin-change-notifications.js';
import * as foreachItems from './migrations/2026-11-27T10-00-00-foreach-items.js';
import * as subworkflows from './migrations/2026-11-27T20-00-00-subworkflows.js';
import * as concurrencySlots from './migrations/2026-11-27T30-00-00-concurrency-slots.js';
import * as approvalsThatReachPeople from './migrations/2026-11-27T40-00-00-approvals-that-reach-people.js';
import * as executionListKeys from './migrations/2026-11-27T50-00-00-execution-list-keys.js';
import * as triggerAuthors from './migrations/2026-11-28T05-00-00-trigger-authors.js';
import * as auditTrail from './migrations/2026-11-28T10-00-00-audit-trail.js';
import * as projects from './migrations/2026-11-28T20-00-00-projects.js';
import * as idempotencyKeysPerProject from './migrations/2026-11-28T21-00-00-idempotency-keys-per-project.js';
import * as apiKeys from './migrations/2026-11-28T22-00-00-api-keys.js';
import * as projectLimits from './migrations/2026-11-28T23-00-00-project-limits.js';
import * as auditProjectId from './migrations/2026-11-28T23-30-00-audit-project-id.js';
import * as projectAllowedPlugins from './migrations/2026-11-28T23-40-00-project-allowed-plugins.js';
import * as executionNamespace from './migrations/2026-11-28T23-50-00-execution-namespace.js';
import * as projectRequestRate from './migrations/2026-11-29T00-00-00-project-request-rate.js';
import * as taskEventTimes from './migrations/2026-11-29T01-00-00-task-event-times.js';
import * as projectExecutionListKeys from './migrations/2026-11-29T02-00-00-project-execution-list-keys.js';
import * as pluginEffects from './migrations/2026-11-29T02-30-00-plugin-effects.js';
import * as revisionSource from './migrations/2026-11-29T02-30-00-revision-source.js';
import * as webhookDeliveryLog from './migrations/2026-11-29T06-10-00-webhook-delivery-log.js';
import * as dryRuns from './migrations/2026-11-29T06-30-00-dry-runs.js';
import * as dryRunTestCase from './migrations/2026-11-29T08-20-00-dry-run-test-case.js';
import * as webhookRefusals from './migrations/2026-11-29T08-40-00-webhook-refusals.js';
import * as interruptedAttempts from './migrations/2026-11-29T11-10-00-interrupted-attempts.js';
import * as draftWorkflows from './migrations/2026-11-29T11-20-00-draft-workflows.js';
import * as taskDryRunPlan from './migrations/2026-11-29T11-20-30-task-dry-run-plan.js';
import * as pluginQuick from './migrations/2026-11-29T14-00-00-plugin-quick.js';
import * as eventNumbersWithoutCounter from './migrations/2026-11-29T20-30-00-event-numbers-without-counter.js';
import type { Database } from './tables.js';

/**
 * Every migration, keyed by its timestamped name. Listed statically (not read from the folder)
 * so migrations work wherever the code runs, bundled or not. Add new files here in order.
 */
export const migrations: Record<string, Migration> = {
  '2026-11-22T00-00-00-initial': initial,
  '2026-11-22T01-00-00-engine': engine,
  '2026-11-22T02-00-00-active-executions': activeExecutions,
  '2026-11-24T00-00-00-execution-inputs': executionInputs,
  '2026-11-24T01-00-00-execution-outputs': executionOutputs,
  '2026-11-24T02-00-00-idempotency-keys': idempotencyKeys,
  '2026-11-24T03-00-00-reruns': reruns,
  '2026-11-24T04-00-00-plugin-output-schema': pluginOutputSchema,
  '2026-11-25T00-00-00-execution-events': executionEvents,
  '2026-11-25T01-00-00-approval-decisions': approvalDecisions,
  '2026-11-25T03-00-00-auth-failures': authFailures,
  '2026-11-26T10-00-00-reset-runs': resetRuns,
  '2026-11-26T20-00-00-workflow-revisions': workflowRevisions,
  '2026-11-26T21-00-00-webhook-triggers': webhookTriggers,
  '2026-11-26T30-00-00-plugin-change-notifications': pluginChangeNotifications,
  '2026-11-27T10-00-00-foreach-items': foreachItems,
  '2026-11-27T20-00-00-subworkflows': subworkflows,
  '2026-11-27T30-00-00-concurrency-slots': concurrencySlots,
  '2026-11-27T40-00-00-approvals-that-reach-people': approvalsThatReachPeople,
  '2026-11-27T50-00-00-execution-list-keys': executionListKeys,
  '2026-11-28T05-00-00-trigger-authors': triggerAuthors,
  '2026-11-28T10-00-00-audit-trail': auditTrail,
  '2026-11-28T20-00-00-projects': projects,
  '2026-11-28T21-00-00-idempotency-keys-per-project': idempotencyKeysPerProject,
  '2026-11-28T22-00-00-api-keys': apiKeys,
  '2026-11-28T23-00-00-project-limits': projectLimits,
  '2026-11-28T23-30-00-audit-project-id': auditProjectId,
  '2026-11-28T23-40-00-project-allowed-plugins': projectAllowedPlugins,
  '2026-11-28T23-50-00-execution-namespace': executionNamespace,
  '2026-11-29T00-00-00-project-request-rate': projectRequestRate,
  '2026-11-29T01-00-00-task-event-times': taskEventTimes,
  '2026-11-29T02-00-00-project-execution-list-keys': projectExecutionListKeys,
  '2026-11-29T02-30-00-plugin-effects': pluginEffects,
  '2026-11-29T02-30-00-revision-source': revisionSource,
  '2026-11-29T06-10-00-webhook-delivery-log': webhookDeliveryLog,
  '2026-11-29T06-30-00-dry-runs': dryRuns,
  '2026-11-29T08-20-00-dry-run-test-case': dryRunTestCase,
  '2026-11-29T08-40-00-webhook-refusals': webhookRefusals,
  '2026-11-29T11-10-00-interrupted-attempts': interruptedAttempts,
  '2026-11-29T11-20-00-draft-workflows': draftWorkflows,
  '2026-11-29T11-20-30-task-dry-run-plan': taskDryRunPlan,
  '2026-11-29T14-00-00-plugin-quick': pluginQuick,
  '2026-11-29T20-30-00-event-numbers-without-counter': eventNumbersWithoutCounter,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Thrown when a migration fails; names the migration and the database's own error. */
export class MigrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

/**
 * Brings the schema up to date. Safe to run from several processes at once: the migrator
 * holds a database lock while it works.
 */
export async function migrateToLatest(db: Kysely<Database>, logger?: Logger): Promise<void> {
  const migrator = new Migrator({ db, provider });
  const { error, results = [] } = await migrator.migrateToLatest();

  for (const result of results) {
    if (result.status === 'Success')
      logger?.info({ migration: result.migrationName }, 'applied migration');
  }
  if (error !== undefined) {
    const failed = results.find((result) => result.status === 'Error')?.migrationName;
    const reason = error instanceof Error ? error.message : inspect(error);
    throw new MigrationError(
      failed ? `Migration ${failed} failed: ${reason}` : `Database migration failed: ${reason}`,
      { cause: error },
    );
  }
  if (!results.some((result) => result.status === 'Success')) {
    logger?.debug('database schema is up to date');
  }
}
