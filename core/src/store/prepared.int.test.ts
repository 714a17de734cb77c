import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedTestDatabase } from '../../../test/support/database.js';
import type { TrellisDatabase } from './database.js';
import { preparedQuery } from './prepared.js';
import * as workflowRepository from './workflow-repository.js';

let database: TrellisDatabase;

beforeAll(async () => {
  database = await openMigratedTestDatabase();
});
afterAll(() => database?.close());

const definition = (name: string) => JSON.stringify({ name, tasks: [] });

describe('preparedQuery', () => {
  const workflowsNamed = preparedQuery((db, values: { name: string; pattern: string }) =>
    db
      .selectFrom('workflow')
      .select(['id', 'name', 'modifiedDate'])
      .where((eb) => eb.or([eb('name', '=', values.name), eb('name', 'like', values.pattern)]))
      .where('definition', '<>', '')
      .orderBy('name'),
  );

  it('runs the SQL compiled once with each call’s values, rows mapped by the plugins', async () => {
    const { db } = database;
    const alpha = await workflowRepository.insert(db, {
      name: 'alpha',
      definition: definition('alpha'),
    });
    const beta = await workflowRepository.insert(db, {
      name: 'beta-1',
      definition: definition('beta-1'),
    });

    expect(await workflowsNamed(db, { name: 'alpha', pattern: 'none%' })).toEqual([
      { id: alpha.id, name: 'alpha', modifiedDate: alpha.modifiedDate },
    ]);
    expect(await workflowsNamed(db, { name: 'gamma', pattern: 'beta%' })).toEqual([
      { id: beta.id, name: 'beta-1', modifiedDate: beta.modifiedDate },
    ]);
    // Inside a transaction too, with the same compiled SQL.
    const inTransaction = await db
      .transaction()
      .execute((trx) => workflowsNamed(trx, { name: 'alpha', pattern: 'beta%' }));
    expect(inTransaction.map((row) => row.name)).toEqual(['alpha', 'beta-1']);
  });

  it('refuses a query that writes a value into the SQL text', async () => {
    const inlined = preparedQuery((db, values: { name: string }) =>
      db.selectFrom('workflow').select('id').where('name', '=', sql.lit(values.name)),
    );
    await expect(inlined(database.db, { name: 'alpha' })).rejects.toThrow(
      /value "name" did not become a parameter/,
    );
  });
});
