import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedTestDatabase } from '../../../test/support/database.js';
import type { TrellisDatabase } from './database.js';
import * as triggerRepository from './trigger-repository.js';
import * as workflowRepository from './workflow-repository.js';

let database: TrellisDatabase;

beforeAll(async () => {
  database = await openMigratedTestDatabase();
});
afterAll(() => database?.close());

async function newWorkflow(name: string) {
  return workflowRepository.insert(database.db, {
    name,
    definition: JSON.stringify({ name, tasks: [] }),
  });
}

const cron = {
  type: 'TimeBased',
  status: 'Active',
  properties: { cron: '*/5 * * * *', timezone: 'Europe/Paris' },
} as const;

describe('triggerRepository', () => {
  it('inserts and finds a trigger within its workflow only', async () => {
    const { db } = database;
    const workflow = await newWorkflow('with-trigger');
    const other = await newWorkflow('without-trigger');
    const created = await triggerRepository.insert(db, workflow.id, cron);
    expect(created).toMatchObject({ workflowId: workflow.id, ...cron });
    expect(created.lastModified).toBeInstanceOf(Date);
    expect(await triggerRepository.findById(db, workflow.id, created.id)).toEqual(created);
    expect(await triggerRepository.findById(db, other.id, created.id)).toBeUndefined();
    expect(await triggerRepository.findById(db, workflow.id, 'bad')).toBeUndefined();
  });

  it('is NotFound when adding a trigger to an unknown workflow', async () => {
    const { db } = database;
    const missing = crypto.randomUUID();
    await expect(triggerRepository.insert(db, missing, cron)).rejects.toMatchObject({
      code: 'not_found',
      messages: [`Workflow ${missing} not found`],
    });
    await expect(triggerRepository.insert(db, 'bad-id', cron)).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('replaces type, status and properties and stamps lastModified', async () => {
    const { db } = database;
    const workflow = await newWorkflow('update-trigger');
    const created = await triggerRepository.insert(db, workflow.id, cron);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const updated = await triggerRepository.update(db, workflow.id, created.id, {
      type: 'Manual',
      status: 'DeActive',
      properties: { note: 'x' },
    });
    expect(updated).toMatchObject({
      id: created.id,
      type: 'Manual',
      status: 'DeActive',
      properties: { note: 'x' },
    });
    expect(updated!.lastModified.getTime()).toBeGreaterThan(created.lastModified.getTime());
    const other = await newWorkflow('update-trigger-other');
    expect(await triggerRepository.update(db, other.id, created.id, cron)).toBeUndefined();
  });

  it('removes only within its workflow', async () => {
    const { db } = database;
    const workflow = await newWorkflow('remove-trigger');
    const other = await newWorkflow('remove-trigger-other');
    const created = await triggerRepository.insert(db, workflow.id, cron);
    expect(await triggerRepository.remove(db, other.id, created.id)).toBe(false);
    expect(await triggerRepository.remove(db, workflow.id, created.id)).toBe(true);
    expect(await triggerRepository.remove(db, workflow.id, created.id)).toBe(false);
  });

  it('lists a workflow’s triggers oldest first, and every TimeBased trigger', async () => {
    const { db } = database;
    const workflow = await newWorkflow('list-triggers');
    const first = await triggerRepository.insert(db, workflow.id, cron);
    const second = await triggerRepository.insert(db, workflow.id, {
      type: 'Manual',
      status: 'Active',
      properties: {},
    });
    const third = await triggerRepository.insert(db, workflow.id, { ...cron, status: 'DeActive' });
    expect((await triggerRepository.listByWorkflow(db, workflow.id)).map((row) => row.id)).toEqual([
      first.id,
      second.id,
      third.id,
    ]);
    expect(await triggerRepository.listByWorkflow(db, crypto.randomUUID())).toEqual([]);

    const timeBased = await triggerRepository.listTimeBased(db);
    const ids = timeBased.map((row) => row.id);
    expect(ids).toEqual(expect.arrayContaining([first.id, third.id]));
    expect(ids).not.toContain(second.id);
    expect(timeBased.every((row) => row.type === 'TimeBased')).toBe(true);
  });
});
