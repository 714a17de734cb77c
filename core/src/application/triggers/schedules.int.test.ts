import { randomUUID } from 'node:crypto';
import { ScheduleNotFoundError } from '@temporalio/client';
import type { TypedSearchAttributes } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestDatabase,
  testServices,
  uniqueTaskQueue,
} from '../../../../test/support/services.js';
import { buildConfig } from '#platform/config/load.js';
import type { TrellisConfig } from '#platform/config/types.js';
import { openDatabase, type TrellisDatabase } from '#store/database.js';
import { migrateToLatest } from '#store/migrate.js';
import { Invalid } from '#definition/errors.js';
import { createLogger } from '#platform/logging.js';
import { connectTemporal, type TemporalConnection } from '#platform/temporal/connection.js';
import { scheduleId } from '#protocol/ids.js';
import {
  deleteTriggerSchedule,
  reconcileSchedules,
  syncTriggerSchedule,
  type ScheduleTrigger,
} from './schedules.js';
import {
  ensureSearchAttributes,
  TrellisProject,
  TrellisStatus,
  TrellisWorkflowId,
  TrellisWorkflowName,
} from '#protocol/search-attributes.js';

const logger = createLogger({ Level: 'silent' });
let config: TrellisConfig;
let database: TrellisDatabase;
let temporal: TemporalConnection;

beforeAll(async () => {
  const { temporalAddress } = testServices();
  config = buildConfig({
    Database: { Url: await createTestDatabase() },
    Temporal: { Address: temporalAddress, TaskQueue: uniqueTaskQueue() },
  });
  database = await openDatabase(config, logger);
  await migrateToLatest(database.db);
  temporal = await connectTemporal(config.Temporal, logger);
  await ensureSearchAttributes(temporal.connection, config.Temporal.Namespace);
  temporal.projectAttribute = true;
  temporal.statusAttribute = true;
});

afterAll(async () => {
  await temporal?.connection.close();
  await database?.close();
});

async function storedWorkflow(name = `Nightly-${randomUUID().slice(0, 8)}`) {
  const id = randomUUID();
  await database.db
    .insertInto('workflow')
    .values({ id, name, definition: JSON.stringify({ name, tasks: [] }), modifiedDate: new Date() })
    .execute();
  const { projectId } = await database.db
    .selectFrom('workflow')
    .select('projectId')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return { id, name, projectId, project: 'default' };
}

async function storedTrigger(
  workflowId: string,
  trigger: Omit<ScheduleTrigger, 'id'>,
): Promise<ScheduleTrigger> {
  const id = randomUUID();
  await database.db
    .insertInto('workflowTrigger')
    .values({
      id,
      workflowId,
      ...trigger,
      properties: JSON.stringify(trigger.properties),
      lastModified: new Date(),
    })
    .execute();
  return { id, ...trigger };
}

const describeSchedule = (triggerId: string) =>
  temporal.client.schedule.getHandle(scheduleId(triggerId)).describe();

async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('syncTriggerSchedule', () => {
  it('creates a schedule for an Active TimeBased trigger with cron, time zone, action and search attributes', async () => {
    const workflow = await storedWorkflow();
    const trigger: ScheduleTrigger = {
      id: randomUUID(),
      type: 'TimeBased',
      status: 'Active',
      properties: { cron: '30 6 * * 1', timezone: 'Europe/Berlin' },
    };
    await syncTriggerSchedule(temporal, config, trigger, workflow);

    const schedule = await describeSchedule(trigger.id);
    expect(schedule.state.paused).toBe(false);
    expect(schedule.spec.timezone).toBe('Europe/Berlin');
    const next = schedule.info.nextActionTimes[0]!;
    const berlin = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Berlin',
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
    }).format(next);
    expect(berlin).toBe('Mon 06:30');
    expect(schedule.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'trellisExecutionV2',
      taskQueue: config.Temporal.TaskQueue,
      workflowId: `trellis-scheduled-${trigger.id}`,
      args: [{ scheduled: { workflowId: workflow.id, triggerId: trigger.id } }],
      priority: { fairnessKey: workflow.projectId },
    });
    if (schedule.action.type !== 'startWorkflow') throw new Error('unexpected action');
    // A description always carries the class, though the action type allows plain pairs too.
    const attributes = schedule.action.typedSearchAttributes as TypedSearchAttributes;
    expect(attributes.get(TrellisWorkflowId)).toBe(workflow.id);
    expect(attributes.get(TrellisWorkflowName)).toBe(workflow.name);
    expect(attributes.get(TrellisProject)).toBe('default');
    // Its runs start `Running`: they upsert `TrellisStatus` only when that changes.
    expect(attributes.get(TrellisStatus)).toBe('Running');
    await deleteTriggerSchedule(temporal.client, trigger.id);
  });

  it('pauses a DeActive trigger, unpauses it when Active again and applies a new cron', async () => {
    const workflow = await storedWorkflow();
    const trigger: ScheduleTrigger = {
      id: randomUUID(),
      type: 'TimeBased',
      status: 'DeActive',
      properties: { cron: '0 0 * * *' },
    };
    await syncTriggerSchedule(temporal, config, trigger, workflow);
    expect((await describeSchedule(trigger.id)).state.paused).toBe(true);
    expect((await describeSchedule(trigger.id)).spec.timezone).toBe('UTC');

    await syncTriggerSchedule(
      temporal,
      config,
      { ...trigger, status: 'Active', properties: { Cron: '15 3 * * *' } },
      workflow,
    );
    const schedule = await describeSchedule(trigger.id);
    expect(schedule.state.paused).toBe(false);
    expect(schedule.info.nextActionTimes[0]!.toISOString()).toMatch(/T03:15:00\.000Z$/);
    await deleteTriggerSchedule(temporal.client, trigger.id);
  });

  it('removes the schedule when the trigger becomes Manual, and deleting twice is fine', async () => {
    const workflow = await storedWorkflow();
    const trigger: ScheduleTrigger = {
      id: randomUUID(),
      type: 'TimeBased',
      status: 'Active',
      properties: { cron: '0 * * * *' },
    };
    await syncTriggerSchedule(temporal, config, trigger, workflow);
    await syncTriggerSchedule(
      temporal,
      config,
      { ...trigger, type: 'Manual', properties: {} },
      workflow,
    );
    await expect(describeSchedule(trigger.id)).rejects.toBeInstanceOf(ScheduleNotFoundError);
    await deleteTriggerSchedule(temporal.client, trigger.id);
  });

  it('rejects an invalid cron or time zone as Invalid and creates nothing', async () => {
    const workflow = await storedWorkflow();
    for (const properties of [
      { cron: '61 * * * *' },
      { cron: '* * * *' },
      { cron: '0 0 * * *', timezone: 'Mars/Olympus' },
    ]) {
      const trigger: ScheduleTrigger = {
        id: randomUUID(),
        type: 'TimeBased',
        status: 'Active',
        properties,
      };
      const error = await syncTriggerSchedule(temporal, config, trigger, workflow).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(Invalid);
      await expect(describeSchedule(trigger.id)).rejects.toBeInstanceOf(ScheduleNotFoundError);
    }
  });

  it('starts a trellisExecutionV2 run when the schedule is triggered', async () => {
    const workflow = await storedWorkflow();
    const trigger: ScheduleTrigger = {
      id: randomUUID(),
      type: 'TimeBased',
      status: 'Active',
      properties: { cron: '0 0 1 1 *' },
    };
    await syncTriggerSchedule(temporal, config, trigger, workflow);
    await temporal.client.schedule.getHandle(scheduleId(trigger.id)).trigger();

    const action = await eventually(
      async () => (await describeSchedule(trigger.id)).info.recentActions[0],
    );
    const run = temporal.client.workflow.getHandle(action.action.workflow.workflowId);
    const started = await run.describe();
    expect(started.workflowId).toMatch(new RegExp(`^trellis-scheduled-${trigger.id}`));
    expect(started.type).toBe('trellisExecutionV2');
    expect(started.taskQueue).toBe(config.Temporal.TaskQueue);
    expect(started.typedSearchAttributes.get(TrellisWorkflowId)).toBe(workflow.id);
    // No worker polls this test's task queue: end the run instead of leaving it waiting.
    await run.terminate('test over');
    await deleteTriggerSchedule(temporal.client, trigger.id);
  });
});

describe('reconcileSchedules', () => {
  it('creates missing schedules, updates stale ones and deletes orphans of this task queue only', async () => {
    const workflow = await storedWorkflow();
    const missing = await storedTrigger(workflow.id, {
      type: 'TimeBased',
      status: 'Active',
      properties: { cron: '0 1 * * *' },
    });
    const stale = await storedTrigger(workflow.id, {
      type: 'TimeBased',
      status: 'DeActive',
      properties: { cron: '0 2 * * *' },
    });
    const inStep = await storedTrigger(workflow.id, {
      type: 'TimeBased',
      status: 'Active',
      properties: { cron: '0 3 * * *' },
    });
    await storedTrigger(workflow.id, { type: 'Manual', status: 'Active', properties: {} });
    // The schedule of `stale` still says Active: the database changed while Temporal was unreachable.
    await syncTriggerSchedule(temporal, config, { ...stale, status: 'Active' }, workflow);
    await syncTriggerSchedule(temporal, config, inStep, workflow);
    const orphan: ScheduleTrigger = {
      id: randomUUID(),
      type: 'TimeBased',
      status: 'Active',
      properties: { cron: '0 4 * * *' },
    };
    await syncTriggerSchedule(temporal, config, orphan, workflow);
    const otherInstallation: ScheduleTrigger = { ...orphan, id: randomUUID() };
    const otherConfig = buildConfig({ Temporal: { TaskQueue: uniqueTaskQueue() } });
    await syncTriggerSchedule(temporal, otherConfig, otherInstallation, workflow);
    // Listing is eventually consistent: wait until reconcile can see the orphan.
    await eventually(async () => {
      for await (const schedule of temporal.client.schedule.list()) {
        if (schedule.scheduleId === scheduleId(orphan.id)) return true;
      }
      return undefined;
    });

    const report = await reconcileSchedules(database.db, temporal, config, logger);

    expect(report.created).toEqual([missing.id]);
    expect(report.updated).toEqual([stale.id]);
    expect(report.deleted).toEqual([orphan.id]);
    expect(report.failed).toEqual([]);
    expect((await describeSchedule(missing.id)).state.paused).toBe(false);
    expect((await describeSchedule(stale.id)).state.paused).toBe(true);
    await expect(describeSchedule(orphan.id)).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect((await describeSchedule(otherInstallation.id)).state.paused).toBe(false);

    const again = await reconcileSchedules(database.db, temporal, config, logger);
    expect(again).toEqual({ created: [], updated: [], deleted: [], failed: [] });
    await deleteTriggerSchedule(temporal.client, otherInstallation.id);
  });
});
