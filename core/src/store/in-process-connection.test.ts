import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessConnection } from './in-process-connection.js';

let pglite: PGlite;
beforeAll(async () => {
  pglite = await PGlite.create();
  await pglite.exec('create table notes (id int primary key, text text)');
});
afterAll(() => pglite?.close());

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ stream: inProcessConnection(pglite), user: 'postgres' });
  await client.connect();
  return client;
}

describe('inProcessConnection', () => {
  it('serves pg in this process: parameters, types, errors, and results of any size', async () => {
    const client = await connect();
    try {
      const { rows } = await client.query<{ next: number; at: Date }>(
        'select $1::int + 1 as next, now() as at',
        [41],
      );
      expect(rows[0]!.next).toBe(42);
      expect(rows[0]!.at).toBeInstanceOf(Date);
      await expect(client.query('selec 1')).rejects.toMatchObject({ code: '42601' });
      // The connection goes on after an error, and a result far larger than one chunk arrives whole.
      const big = await client.query(
        'select repeat($1, 1000) as text from generate_series(1, 2000)',
        ['x'],
      );
      expect(big.rows).toHaveLength(2000);
      expect(big.rows.every((row: { text: string }) => row.text.length === 1000)).toBe(true);
    } finally {
      await client.end();
    }
  });

  it('rolls back what a connection left open in a transaction when it ends', async () => {
    const first = await connect();
    await first.query('begin');
    await first.query("insert into notes values (1, 'never committed')");
    await first.end();
    expect(pglite.isInTransaction()).toBe(false);

    const second = await connect();
    try {
      expect(
        (await second.query<{ n: number }>('select count(*)::int as n from notes')).rows[0]!.n,
      ).toBe(0);
    } finally {
      await second.end();
    }
  });
});
