/**
 * The API baseline: a bare Express + `pg` server doing what `GET /workflows/{id}` and
 * `POST /workflows/Add` do at their core (one single-row SELECT, one INSERT) on the same
 * PostgreSQL, table and pool size as Trellis; no auth, validation or envelope.
 *
 *   tsx bench/baseline/express-server.ts --database=<url> --pool=<n>
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pg from 'pg';
import { announceReady, requiredArguments, stopOnSignal } from './arguments.js';

const args = requiredArguments(['database', 'pool']);
const pool = new pg.Pool({ connectionString: args.database, max: Number(args.pool) });
const app = express();
app.use(express.json({ limit: '1mb' }));

app.get('/workflows/:id', async (req, res) => {
  const { rows } = await pool.query('select id, name, definition from workflow where id = $1', [
    req.params.id,
  ]);
  const row = rows[0] as { id: string; name: string; definition: string } | undefined;
  if (!row) {
    res.status(404).json({ data: null });
    return;
  }
  res.json({ data: { id: row.id, name: row.name, workflow: row.definition } });
});

app.post('/workflows/Add', async (req, res) => {
  const text = (req.body as { definition: string }).definition;
  const { name } = JSON.parse(text) as { name: string };
  const { rows } = await pool.query(
    'insert into workflow (id, name, definition, modified_date) values ($1, $2, $3, now()) returning id, name',
    [randomUUID(), name, text],
  );
  res.json({ data: rows[0] as unknown });
});

const server = app.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  announceReady({ url: `http://127.0.0.1:${port}` });
});
stopOnSignal(async () => {
  server.close();
  server.closeAllConnections();
  await pool.end();
});
