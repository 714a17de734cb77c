import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedTestDatabase } from '../../../test/support/database.js';
import * as configurationRepository from './configuration-repository.js';
import type { TrellisDatabase } from './database.js';
import * as projectRepository from './project-repository.js';

let database: TrellisDatabase;
/** The project every configuration here is made in: `default`. */
let project: string;

beforeAll(async () => {
  database = await openMigratedTestDatabase();
  project = (await projectRepository.findByIdOrName(database.db, 'default'))!.id;
});
afterAll(() => database?.close());

const input = (
  name: string,
  overrides: Partial<configurationRepository.ConfigurationInput> = {},
) => ({
  name,
  type: 'Storage/Local',
  version: '1.0.0',
  specifications: { root: '/data', nested: { a: [1, 2] } },
  ...overrides,
});

describe('configurationRepository', () => {
  it('inserts, finds by id and name, with modifiedTime null until updated', async () => {
    const { db } = database;
    const created = await configurationRepository.insert(db, project, input('reports'));
    expect(created).toMatchObject({ ...input('reports'), modifiedTime: null });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.createdAt).toBeInstanceOf(Date);
    expect(await configurationRepository.findById(db, project, created.id)).toEqual(created);
    expect(await configurationRepository.findByName(db, project, 'reports')).toEqual(created);
  });

  it('answers undefined for unknown and malformed ids', async () => {
    const { db } = database;
    expect(
      await configurationRepository.findById(db, project, crypto.randomUUID()),
    ).toBeUndefined();
    expect(await configurationRepository.findById(db, project, 'not-a-uuid')).toBeUndefined();
    expect(await configurationRepository.update(db, 'nope', input('x'))).toBeUndefined();
    expect(await configurationRepository.remove(db, 'nope')).toBe(false);
  });

  it('rejects a duplicate name as a conflict naming it, on insert and on update', async () => {
    const { db } = database;
    await configurationRepository.insert(db, project, input('dup-a'));
    const other = await configurationRepository.insert(db, project, input('dup-b'));
    await expect(configurationRepository.insert(db, project, input('dup-a'))).rejects.toMatchObject(
      {
        code: 'conflict',
        messages: ['A configuration named "dup-a" already exists'],
      },
    );
    await expect(
      configurationRepository.update(db, other.id, input('dup-a')),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect((await configurationRepository.findById(db, project, other.id))?.name).toBe('dup-b');
  });

  it('updates every field and stamps modifiedTime', async () => {
    const { db } = database;
    const created = await configurationRepository.insert(db, project, input('to-update'));
    const updated = await configurationRepository.update(
      db,
      created.id,
      input('updated', { type: 'Net/Http', version: '2.0.0', specifications: {} }),
    );
    expect(updated).toMatchObject({
      id: created.id,
      name: 'updated',
      type: 'Net/Http',
      version: '2.0.0',
      specifications: {},
    });
    expect(updated!.modifiedTime).toBeInstanceOf(Date);
    expect(updated!.modifiedTime!.getTime()).toBeGreaterThanOrEqual(created.createdAt.getTime());
    expect(
      await configurationRepository.update(db, crypto.randomUUID(), input('ghost')),
    ).toBeUndefined();
  });

  it('removes', async () => {
    const { db } = database;
    const created = await configurationRepository.insert(db, project, input('to-remove'));
    expect(await configurationRepository.remove(db, created.id)).toBe(true);
    expect(await configurationRepository.remove(db, created.id)).toBe(false);
    expect(await configurationRepository.findById(db, project, created.id)).toBeUndefined();
  });

  it('lists by name, paged on request', async () => {
    const { db } = database;
    for (const name of ['list-c', 'list-a', 'list-b'])
      await configurationRepository.insert(db, project, input(name));
    const all = await configurationRepository.list(db, project);
    const names = all.items.map((row) => row.name);
    expect(names).toEqual([...names].sort());
    expect(all.pagination).toEqual({
      page: 1,
      pageSize: names.length,
      totalCount: names.length,
      totalPages: 1,
    });

    const page = await configurationRepository.list(db, project, { page: 2, pageSize: 2 });
    expect(page.items.map((row) => row.name)).toEqual(names.slice(2, 4));
    expect(page.pagination).toEqual({
      page: 2,
      pageSize: 2,
      totalCount: names.length,
      totalPages: Math.ceil(names.length / 2),
    });
    const beyond = await configurationRepository.list(db, project, { page: 999, pageSize: 2 });
    expect(beyond.items).toEqual([]);
    expect(beyond.pagination.totalCount).toBe(names.length);
  });

  it('keeps the configurations of each project to it, where names are unique', async () => {
    const { db } = database;
    const other = await projectRepository.insert(db, 'config-repository-other');
    const mine = await configurationRepository.insert(db, project, input('shared-name'));
    const theirs = await configurationRepository.insert(db, other.id, input('shared-name'));
    expect(await configurationRepository.findById(db, other.id, mine.id)).toBeUndefined();
    expect(await configurationRepository.findByName(db, other.id, 'shared-name')).toEqual(theirs);
    expect((await configurationRepository.list(db, other.id)).items).toEqual([theirs]);
    await expect(
      configurationRepository.insert(db, other.id, input('shared-name')),
    ).rejects.toMatchObject({ code: 'conflict' });
  });

  it('lists configurations of a plugin, any version or one, type case-insensitively', async () => {
    const { db } = database;
    await configurationRepository.insert(
      db,
      project,
      input('csv-1', { type: 'Data/Csv', version: '1.0.0' }),
    );
    await configurationRepository.insert(
      db,
      project,
      input('csv-2', { type: 'Data/Csv', version: '2.0.0' }),
    );
    await configurationRepository.insert(
      db,
      project,
      input('json-1', { type: 'Data/Json', version: '1.0.0' }),
    );
    const names = async (type: string, version?: string) =>
      (await configurationRepository.listByPlugin(db, type, version)).map((row) => row.name);
    expect(await names('Data/Csv')).toEqual(['csv-1', 'csv-2']);
    expect(await names('data/csv', '2.0.0')).toEqual(['csv-2']);
    expect(await names('Data/Xml')).toEqual([]);
  });
});
