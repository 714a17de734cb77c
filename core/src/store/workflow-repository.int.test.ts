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

const definition = (name: string) => JSON.stringify({ name, tasks: [] }, null, 2);

describe('workflowRepository', () => {
  it('inserts and finds by id and name, keeping the definition text unchanged', async () => {
    const { db } = database;
    const text = `{ "Name": "Nightly",\n  "tasks": [] }`;
    const created = await workflowRepository.insert(db, { name: 'Nightly', definition: text });
    expect(created).toMatchObject({ name: 'Nightly', definition: text });
    expect(created.modifiedDate).toBeInstanceOf(Date);
    expect(await workflowRepository.findById(db, created.id)).toEqual(created);
    expect(await workflowRepository.findByName(db, 'Nightly')).toEqual(created);
    expect(await workflowRepository.findById(db, 'bad-id')).toBeUndefined();
  });

  it('rejects a duplicate name as a conflict', async () => {
    const { db } = database;
    await workflowRepository.insert(db, { name: 'Twice', definition: definition('Twice') });
    await expect(
      workflowRepository.insert(db, { name: 'Twice', definition: '{}' }),
    ).rejects.toMatchObject({
      code: 'conflict',
      messages: ['A workflow named "Twice" already exists'],
    });
    const other = await workflowRepository.insert(db, {
      name: 'Other',
      definition: definition('Other'),
    });
    await expect(
      workflowRepository.update(db, other.id, { name: 'Twice', definition: '{}' }),
    ).rejects.toMatchObject({ code: 'conflict' });
  });

  it('updates the definition and name and moves modifiedDate forward', async () => {
    const { db } = database;
    const created = await workflowRepository.insert(db, {
      name: 'Before',
      definition: definition('Before'),
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const updated = await workflowRepository.update(db, created.id, {
      name: 'After',
      definition: definition('After'),
    });
    expect(updated).toMatchObject({
      id: created.id,
      name: 'After',
      definition: definition('After'),
      createdAt: created.createdAt,
    });
    expect(updated!.modifiedDate.getTime()).toBeGreaterThan(created.modifiedDate.getTime());
    expect(
      await workflowRepository.update(db, crypto.randomUUID(), { name: 'x', definition: '{}' }),
    ).toBeUndefined();
  });

  it('removes a workflow together with its triggers', async () => {
    const { db } = database;
    const created = await workflowRepository.insert(db, {
      name: 'Doomed',
      definition: definition('Doomed'),
    });
    const trigger = await triggerRepository.insert(db, created.id, {
      type: 'Manual',
      status: 'Active',
      properties: {},
    });
    expect(await workflowRepository.remove(db, created.id)).toBe(true);
    expect(await workflowRepository.remove(db, created.id)).toBe(false);
    expect(await triggerRepository.findById(db, created.id, trigger.id)).toBeUndefined();
  });

  it('lists summaries by name (paged on request) and everything with listAll', async () => {
    const { db } = database;
    let projectId = '';
    for (const name of ['zeta', 'alpha', 'mid'])
      ({ projectId } = await workflowRepository.insert(db, { name, definition: definition(name) }));
    const all = await workflowRepository.list(db, projectId);
    const names = all.items.map((row) => row.name);
    expect(names).toEqual([...names].sort());
    expect(all.items[0]).not.toHaveProperty('definition');
    expect(Object.keys(all.items[0]!).sort()).toEqual([
      'createdAt',
      'id',
      'modifiedDate',
      'name',
      'revision',
    ]);

    const page = await workflowRepository.list(db, projectId, { page: 1, pageSize: 2 });
    expect(page.items.map((row) => row.name)).toEqual(names.slice(0, 2));
    expect(page.pagination).toEqual({
      page: 1,
      pageSize: 2,
      totalCount: names.length,
      totalPages: Math.ceil(names.length / 2),
    });

    const everything = await workflowRepository.listAll(db);
    expect(everything.map((row) => row.name)).toEqual(names);
    expect(everything.find((row) => row.name === 'alpha')?.definition).toBe(definition('alpha'));
  });

  it('works inside a transaction that rolls back', async () => {
    const { db } = database;
    await db
      .transaction()
      .execute(async (trx) => {
        await workflowRepository.insert(trx, { name: 'Ghost', definition: '{}' });
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(await workflowRepository.findByName(db, 'Ghost')).toBeUndefined();
  });
});
