/**
 * TimeBased triggers as Temporal Schedules. Temporal does the timekeeping; the
 * database stays the source of truth, and `reconcileSchedules` repairs drift at start-up.
 */
import {
  type Client,
  isGrpcServiceError,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type ScheduleUpdateOptions,
  type WorkflowStartOptions,
} from '@temporalio/client';
// The SDK's own conversions between dates and protobuf timestamps (a deep import: UPGRADING.md).
import { optionalDateToTs, tsToDate } from '@temporalio/common/lib/time.js';
import { Cron, CronPattern } from 'croner';
import type { Kysely, Selectable } from 'kysely';
import * as triggerRepository from '#store/trigger-repository.js';
import * as projectRepository from '#store/project-repository.js';
import * as workflowRepository from '#store/workflow-repository.js';
import type { TrellisConfig } from '#platform/config/types.js';
import {
  clientOf,
  namespaceOfProject,
  trellisNamespaces,
  type TemporalClient,
} from '#platform/temporal/connection.js';
import type { Database, WorkflowTable, WorkflowTriggerTable } from '#store/tables.js';
import { resolveInputs, type InputsResult } from '#definition/inputs.js';
import type { WorkflowDefinition } from '#definition/types.js';
import { Invalid, NotFound, TrellisError, Unavailable } from '#definition/errors.js';
import type { Logger } from '#platform/logging.js';
import { formatPath, type PathSegment } from '#definition/validation/path.js';
import { problemAt, problemsOf, type Problem } from '#definition/validation/problem.js';
import {
  checkSchedulePolicies,
  formatDuration,
  propertyValue,
  temporalOverlapPolicy,
  type OverlapPolicy,
} from './schedule-policies.js';
import { scheduledWorkflowIdPrefix, scheduleId, triggerIdOfSchedule } from '#protocol/ids.js';
import {
  projectAttributes,
  startStatusAttributes,
  type AttributesOfNamespace,
} from '#protocol/execution-run.js';
import { executionWorkflowType, type ExecutionInput } from '#protocol/messages.js';
import { TrellisWorkflowId, TrellisWorkflowName } from '#protocol/search-attributes.js';
import { runDetails, runSummary } from '#protocol/user-metadata.js';

/** The gRPC status codes Temporal's answers are told apart by. */
const grpcStatus = {
  invalidArgument: 3,
  deadlineExceeded: 4,
  notFound: 5,
  unavailable: 14,
} as const;

export type ScheduleTrigger = Pick<
  Selectable<WorkflowTriggerTable>,
  'id' | 'type' | 'status' | 'properties'
>;
/** The workflow a schedule runs, and the name of its project. */
export type ScheduleWorkflow = Pick<Selectable<WorkflowTable>, 'id' | 'name' | 'projectId'> & {
  project: string;
};

/**
 * An error message for a cron expression (5 fields: minute hour day-of-month month day-of-week)
 * or IANA time zone that cannot be used, or null when both are fine.
 */
export function validateCron(expression: string, timezone?: string): string | null {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 || !fields[0]) {
    return `cron must have 5 fields (minute hour day-of-month month day-of-week), got ${JSON.stringify(expression)}`;
  }
  try {
    new CronPattern(expression.trim());
  } catch (error) {
    return `cron ${JSON.stringify(expression)} is invalid: ${(error as Error).message.replace(/^CronPattern: /, '')}`;
  }
  if (timezone !== undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    } catch {
      return `timezone ${JSON.stringify(timezone)} is not an IANA time zone (e.g. "Europe/Berlin")`;
    }
  }
  return null;
}

/**
 * When an Active TimeBased trigger fires next after `now`, from its cron and time zone (before
 * jitter, as Temporal adds that per firing); null for other triggers or a cron that fires no more.
 */
export function nextFiringOf(
  trigger: Pick<ScheduleTrigger, 'type' | 'status' | 'properties'>,
  now = new Date(),
): Date | null {
  if (trigger.type !== 'TimeBased' || trigger.status !== 'Active') return null;
  const { cron, timezone } = cronProperties(trigger.properties);
  if (typeof cron !== 'string') return null;
  const zone = typeof timezone === 'string' && timezone ? timezone : 'UTC';
  if (validateCron(cron, zone) !== null) return null;
  return new Cron(cron.trim(), { timezone: zone, paused: true }).nextRun(now);
}

/** `cron` and `timezone` of a TimeBased trigger's properties (keys read case-insensitively). */
export function cronProperties(properties: Record<string, unknown>): {
  cron?: unknown;
  timezone?: unknown;
} {
  return {
    cron: propertyValue(properties, 'cron'),
    timezone: propertyValue(properties, 'timezone'),
  };
}

/**
 * The inputs a TimeBased trigger's `properties.inputs` gives each run it fires (key read
 * case-insensitively), resolved against the definition; `at` names the properties in messages.
 */
export function triggerInputs(
  properties: Record<string, unknown>,
  definition: Pick<WorkflowDefinition, 'inputs'>,
  at: readonly PathSegment[],
): InputsResult {
  const given = propertyValue(properties, 'inputs');
  if (
    given !== undefined &&
    (typeof given !== 'object' || given === null || Array.isArray(given))
  ) {
    return { ok: false, problems: [problemAt(formatPath([...at, 'inputs']), 'must be an object')] };
  }
  return resolveInputs(definition, given as Record<string, unknown> | undefined, [...at, 'inputs']);
}

/**
 * Problems with a TimeBased trigger's properties, one each; empty when usable. `at` is where the
 * properties are (`body.properties` in a request).
 */
export function checkTimeBasedProperties(
  properties: Record<string, unknown>,
  at: readonly PathSegment[] = ['properties'],
): Problem[] {
  const policies = checkSchedulePolicies(properties, at);
  const policyProblems = policies.ok ? [] : policies.problems;
  const { cron, timezone } = cronProperties(properties);
  const sentence = (message: string) => problemAt(undefined, message);
  if (typeof cron !== 'string' || !cron.trim()) {
    const cronAt = formatPath([...at, 'cron']);
    return [sentence(`${cronAt} is required for a TimeBased trigger`), ...policyProblems];
  }
  if (timezone !== undefined && typeof timezone !== 'string') {
    const timezoneAt = formatPath([...at, 'timezone']);
    return [sentence(`${timezoneAt} must be a string`), ...policyProblems];
  }
  const problem = validateCron(cron, timezone);
  return [...(problem ? [problemAt(formatPath(at), problem)] : []), ...policyProblems];
}

/**
 * Makes Temporal match one trigger: a TimeBased trigger gets its schedule created or updated
 * (paused when DeActive); any other trigger has none. Invalid cron → `Invalid`.
 */
export async function syncTriggerSchedule(
  temporal: TemporalClient,
  config: TrellisConfig,
  trigger: ScheduleTrigger,
  workflow: ScheduleWorkflow,
): Promise<void> {
  const client = projectClient(temporal, config, workflow.project);
  const has = attributesOf(temporal);
  if (trigger.type !== 'TimeBased') {
    await deleteTriggerSchedule(client, trigger.id);
    return;
  }
  const options = scheduleOptions(config, trigger, workflow, has);
  await translateTemporalErrors(async () => {
    try {
      await client.schedule.create({ scheduleId: scheduleId(trigger.id), ...options });
    } catch (error) {
      if (!(error instanceof ScheduleAlreadyRunning)) throw error;
      await client.schedule.getHandle(scheduleId(trigger.id)).update(() => options);
    }
  });
}

/** The client of the namespace a project's schedules and runs live in (`Projects.Namespaces`). */
export function projectClient(
  temporal: TemporalClient,
  config: Pick<TrellisConfig, 'Projects' | 'Temporal'>,
  project: string,
): Client {
  return clientOf(temporal, namespaceOfProject(config, project));
}

/** Deletes a trigger's schedule; a schedule that does not exist is fine. */
export async function deleteTriggerSchedule(client: Client, triggerId: string): Promise<void> {
  await translateTemporalErrors(async () => {
    try {
      await client.schedule.getHandle(scheduleId(triggerId)).delete();
    } catch (error) {
      if (!(error instanceof ScheduleNotFoundError)) throw error;
    }
  });
}

export interface ReconcileReport {
  created: string[];
  updated: string[];
  deleted: string[];
  /** Triggers whose schedule could not be made (e.g. a cron Temporal rejects), with the reason. */
  failed: { triggerId: string; reason: string }[];
}

/**
 * Start-up repair: every TimeBased trigger in the database gets a matching schedule, and
 * `trellis-trigger-*` schedules on this installation's task queue without such a trigger are
 * deleted. Logs and returns what changed.
 */
export async function reconcileSchedules(
  db: Kysely<Database>,
  temporal: TemporalClient,
  config: TrellisConfig,
  logger: Logger,
): Promise<ReconcileReport> {
  const has = attributesOf(temporal);
  const report: ReconcileReport = { created: [], updated: [], deleted: [], failed: [] };
  const triggers = await triggerRepository.listTimeBased(db);
  const workflows = new Map<string, ScheduleWorkflow | undefined>();
  /** The namespace each trigger's schedule belongs in (its project's). */
  const wantedIn = new Map<string, string>();
  for (const trigger of triggers) {
    if (!workflows.has(trigger.workflowId)) {
      workflows.set(trigger.workflowId, await scheduleWorkflow(db, trigger.workflowId));
    }
    const workflow = workflows.get(trigger.workflowId);
    if (!workflow) continue; // deleted with its triggers between the two queries
    const wanted = scheduleOptions(config, trigger, workflow, has);
    const client = projectClient(temporal, config, workflow.project);
    wantedIn.set(trigger.id, client.options.namespace);
    try {
      const current = await describeSchedule(client, trigger.id);
      if (
        current &&
        current.state.note === wanted.state.note &&
        current.state.paused === wanted.state.paused
      )
        continue;
      await syncTriggerSchedule(temporal, config, trigger, workflow);
      (current ? report.updated : report.created).push(trigger.id);
    } catch (error) {
      report.failed.push({ triggerId: trigger.id, reason: (error as Error).message });
    }
  }

  // An orphan: a schedule without its trigger, or in a namespace its project no longer maps to.
  for (const namespace of trellisNamespaces(config)) {
    const client = clientOf(temporal, namespace);
    for await (const schedule of client.schedule.list()) {
      const triggerId = triggerIdOfSchedule(schedule.scheduleId);
      if (triggerId === null || wantedIn.get(triggerId) === namespace) continue;
      // Another Trellis (or a parallel test) may share the namespace; its task queue tells them apart.
      const orphan = await describeSchedule(client, triggerId);
      if (
        orphan?.action.type !== 'startWorkflow' ||
        orphan.action.taskQueue !== config.Temporal.TaskQueue
      )
        continue;
      await deleteTriggerSchedule(client, triggerId);
      report.deleted.push(triggerId);
    }
  }

  const changed = report.created.length + report.updated.length + report.deleted.length;
  if (changed > 0)
    logger.warn(
      { ...report },
      'schedules repaired to match the TimeBased triggers in the database',
    );
  else
    logger.info(
      { triggers: triggers.length },
      'schedules match the TimeBased triggers in the database',
    );
  for (const failure of report.failed) {
    logger.error(failure, 'could not create the schedule of a TimeBased trigger');
  }
  return report;
}

/** The workflow of a trigger with its project's name; undefined when it is gone. */
async function scheduleWorkflow(
  db: Kysely<Database>,
  workflowId: string,
): Promise<ScheduleWorkflow | undefined> {
  const workflow = await workflowRepository.findById(db, workflowId);
  const project = workflow && (await projectRepository.nameOf(db, workflow.projectId));
  return workflow && project !== undefined ? { ...workflow, project } : undefined;
}

/** Which optional search attributes the runs of the client's namespace carry. */
function attributesOf(temporal: TemporalClient): AttributesOfNamespace {
  return { project: temporal.projectAttribute ?? false, status: temporal.statusAttribute ?? false };
}

function scheduleOptions(
  config: TrellisConfig,
  trigger: ScheduleTrigger,
  workflow: ScheduleWorkflow,
  has: AttributesOfNamespace,
) {
  const { cron, timezone } = cronProperties(trigger.properties);
  if (typeof cron !== 'string')
    throw new Invalid(`trigger ${trigger.id}: properties.cron is required for a TimeBased trigger`);
  const zone = typeof timezone === 'string' && timezone ? timezone : 'UTC';
  const problem = validateCron(cron, zone);
  if (problem) throw new Invalid(`trigger ${trigger.id}: ${problem}`);
  const checked = checkSchedulePolicies(trigger.properties);
  if (!checked.ok) throw new Invalid(problemsOf(`trigger ${trigger.id}`, checked.problems));
  const { overlap, catchupWindowMs, jitterMs } = checked.policies;
  const input: ExecutionInput = {
    scheduled: { workflowId: workflow.id, triggerId: trigger.id },
  };
  const searchAttributes = [
    { key: TrellisWorkflowId, value: workflow.id },
    { key: TrellisWorkflowName, value: workflow.name },
    ...projectAttributes(has.project ? workflow.project : undefined),
  ];
  return {
    spec: { cronExpressions: [cron.trim()], timezone: zone, jitter: jitterMs },
    action: {
      type: 'startWorkflow' as const,
      workflowType: executionWorkflowType,
      taskQueue: config.Temporal.TaskQueue,
      args: [input],
      workflowId: scheduledWorkflowIdPrefix(trigger.id),
      typedSearchAttributes: [...searchAttributes, ...startStatusAttributes(has.status)],
      ...fairShare(workflow.projectId),
      // What the Temporal UI shows of each run the schedule starts, in Trellis's words.
      staticSummary: runSummary(workflow.name, trigger.id),
      staticDetails: runDetails({
        workflowId: workflow.id,
        workflowName: workflow.name,
        project: workflow.project,
        triggerId: trigger.id,
      }),
    },
    // The trigger's policies (README, "Schedule policies"): by default a firing is skipped while
    // the trigger's previous run still runs, and runs missed while Temporal was down are made up
    // only within a minute.
    policies: {
      overlap: ScheduleOverlapPolicy[temporalOverlapPolicy[overlap]],
      catchupWindow: catchupWindowMs,
    },
    typedSearchAttributes: searchAttributes,
    state: {
      paused: trigger.status === 'DeActive',
      // Shown in the Temporal UI, and how reconcile tells an up-to-date schedule from a stale one
      // (Temporal describes cron specs back as calendars, not as the text we sent).
      note: `Trellis trigger ${trigger.id} (${trigger.status}) of workflow "${workflow.name}" (${workflow.id}) in project "${workflow.project}"${has.project ? '' : ' (without TrellisProject)'}${has.status ? '' : ' (without TrellisStatus)'}: cron "${cron.trim()}" ${zone}, overlap ${overlap}, catch-up window ${formatDuration(catchupWindowMs)}, jitter ${formatDuration(jitterMs)}, task queue ${config.Temporal.TaskQueue}, fairness key ${workflow.projectId}, workflow type ${executionWorkflowType}`,
    },
  } satisfies ScheduleUpdateOptions;
}

/**
 * Fair shares: a schedule's runs are dispatched in turn with other projects', as runs started
 * through the API are. The SDK's type of a schedule action leaves `priority` out (1.24), though
 * it sends it and describes it back; spread, it passes the type check.
 */
function fairShare(projectId: string): Pick<WorkflowStartOptions, 'priority'> {
  return { priority: { fairnessKey: projectId } };
}

/** A backfill asks for at most this many firings (Temporal buffers 1,000 at most). */
export const maxBackfillFirings = 500;

/**
 * Asks a trigger's schedule to run the firings between `from` (included) and `to` (excluded)
 * under `overlap`; returns their times, as Temporal computes them. `Invalid` when the range
 * holds none or more than `maxBackfillFirings`; `NotFound` when the schedule is missing.
 */
export async function backfillSchedule(
  client: Client,
  triggerId: string,
  range: { from: Date; to: Date },
  overlap: OverlapPolicy,
): Promise<Date[]> {
  const handle = client.schedule.getHandle(scheduleId(triggerId));
  // Temporal's ranges include their end; matching times exclude their start, backfills include it.
  const end = new Date(range.to.getTime() - 1);
  const times = await translateTemporalErrors(async () => {
    const { startTime } = await client.workflowService.listScheduleMatchingTimes({
      namespace: client.options.namespace,
      scheduleId: scheduleId(triggerId),
      startTime: optionalDateToTs(new Date(range.from.getTime() - 1)),
      endTime: optionalDateToTs(end),
    });
    return (startTime ?? []).map(tsToDate);
  });
  const span = `between ${range.from.toISOString()} and ${range.to.toISOString()}`;
  if (times.length === 0)
    throw new Invalid(problemAt('body', `the trigger's schedule has no firing ${span}`));
  if (times.length > maxBackfillFirings) {
    throw new Invalid(
      problemAt(
        'body',
        `the trigger's schedule fires more than ${maxBackfillFirings} times ${span}; backfill at most ${maxBackfillFirings} firings at once (split the range)`,
      ),
    );
  }
  await translateTemporalErrors(() =>
    handle.backfill({
      start: range.from,
      end,
      overlap: ScheduleOverlapPolicy[temporalOverlapPolicy[overlap]],
    }),
  );
  return times;
}

/** The next `count` firing times of a trigger's schedule (jitter included), soonest first. */
export async function upcomingFirings(
  client: Client,
  triggerId: string,
  count: number,
): Promise<Date[]> {
  const description = await translateTemporalErrors(() =>
    client.schedule.getHandle(scheduleId(triggerId)).describe(),
  );
  return description.info.nextActionTimes.slice(0, count);
}

async function describeSchedule(client: Client, triggerId: string) {
  try {
    return await client.schedule.getHandle(scheduleId(triggerId)).describe();
  } catch (error) {
    if (error instanceof ScheduleNotFoundError) return null;
    throw error;
  }
}

/**
 * Temporal's invalid-argument → `Invalid` (a cron croner accepts but Temporal does not), a
 * missing schedule → `NotFound` (`schedule.not_found`), unreachable → `Unavailable`.
 */
async function translateTemporalErrors<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof TrellisError) throw error;
    const grpc = [error, (error as { cause?: unknown }).cause].find(isGrpcServiceError);
    const code: number | undefined = grpc?.code;
    if (code === grpcStatus.invalidArgument) {
      throw new Invalid(`Temporal rejected the schedule: ${grpc!.details}`);
    }
    if (error instanceof ScheduleNotFoundError || code === grpcStatus.notFound) {
      throw new NotFound(`Temporal has no schedule for this trigger: ${(error as Error).message}`, {
        code: 'schedule.not_found',
      });
    }
    if (code === grpcStatus.unavailable || code === grpcStatus.deadlineExceeded)
      throw new Unavailable(`Temporal is unavailable: ${grpc!.details}`, {
        code: 'temporal.unavailable',
      });
    throw error;
  }
}
