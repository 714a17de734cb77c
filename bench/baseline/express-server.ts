/**
 * The API baselines: a plain Express + `pg` server on the same PostgreSQL, table and pool size
 * as Trellis.
 *
 * - `GET /workflows/:id`: the single-row SELECT and its JSON, nothing else (no auth, no
 *   envelope): the floor of a read.
 * - `POST /workflows/Add`: what any correct service must do with the same request: authenticate
 *   the same Basic credentials (scrypt, verified once and then cached by a hash of the header,
 *   as Trellis caches them), parse the body and validate it and the definition text it carries
 *   with compiled JSON Schema validators (the contract's request schema and the emitted
 *   definition schema), then INSERT. Each problem is a 4xx; a taken name is 409.
 *
 *   tsx bench/baseline/express-server.ts --database=<url> --pool=<n> --user=<name> --passwordHash=<scrypt$...>
 */
import { hash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import express, { type NextFunction, type Request, type Response } from 'express';
import pg from 'pg';
import { verifyPassword } from '#platform/security/password.js';
import { announceReady, requiredArguments, stopOnSignal } from './arguments.js';

const args = requiredArguments(['database', 'pool', 'user', 'passwordHash']);
const pool = new pg.Pool({ connectionString: args.database, max: Number(args.pool) });

const generated = (file: string) =>
  JSON.parse(readFileSync(new URL(`../../generated/${file}`, import.meta.url), 'utf8')) as Record<
    string,
    unknown
  >;
const document = generated('openapi.json') as {
  components: { schemas: { WorkflowWrite: object; DefinitionText: object } };
};
// The contract's request schema with the definition as text (the form the benchmark sends, of
// the two the contract takes); the definition schema is applied below to the parsed text.
const ajv = new Ajv2020({ allErrors: true, strict: false });
const validateBody = ajv.compile({
  ...document.components.schemas.WorkflowWrite,
  properties: { definition: document.components.schemas.DefinitionText },
});
const validateDefinition = ajv.compile<{ name: string }>(
  generated('workflow-definition.schema.json'),
);

function fail(res: Response, status: number, messages: string[], headers = {}): void {
  res.status(status).set(headers).json({ data: null, messages, succeeded: false });
}

/**
 * Verified `Authorization` headers by their sha256 (never the header itself), for a minute,
 * least recently used first out: the same work per request as Trellis' credential cache.
 */
const verified = new Map<string, number>();
const cacheKey = (header: string) => hash('sha256', header, 'base64url');

function isVerified(header: string): boolean {
  const key = cacheKey(header);
  const expiresAt = verified.get(key);
  if (expiresAt === undefined) return false;
  verified.delete(key);
  if (expiresAt <= Date.now()) return false;
  verified.set(key, expiresAt);
  return true;
}

function remember(header: string): void {
  verified.set(cacheKey(header), Date.now() + 60_000);
  if (verified.size > 1000) verified.delete(verified.keys().next().value!);
}

/** Basic auth: one scrypt verification per new header, then a cache hit. */
async function authenticate(req: Request, res: Response, next: NextFunction): Promise<void> {
  const header = req.headers.authorization;
  if (header !== undefined && isVerified(header)) {
    next();
    return;
  }
  const match = header === undefined ? null : /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (
    colon < 0 ||
    decoded.slice(0, colon) !== args.user ||
    !(await verifyPassword(args.passwordHash, decoded.slice(colon + 1)))
  ) {
    fail(res, 401, ['Invalid username or password.'], { 'WWW-Authenticate': 'Basic' });
    return;
  }
  remember(header!);
  next();
}

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

app.post('/workflows/Add', authenticate, async (req, res) => {
  if (!validateBody(req.body)) {
    fail(res, 400, ajv.errorsText(validateBody.errors).split(', '));
    return;
  }
  const text = (req.body as { definition: string }).definition;
  let definition: unknown;
  try {
    definition = JSON.parse(text);
  } catch (error) {
    fail(res, 400, [`definition: ${(error as Error).message}`]);
    return;
  }
  if (!validateDefinition(definition)) {
    fail(res, 400, ajv.errorsText(validateDefinition.errors).split(', '));
    return;
  }
  try {
    const { rows } = await pool.query(
      'insert into workflow (id, name, definition, modified_date) values ($1, $2, $3, now()) returning id, name',
      [randomUUID(), definition.name, text],
    );
    res.json({ data: rows[0] as unknown });
  } catch (error) {
    if ((error as { code?: string }).code !== '23505') throw error;
    fail(res, 409, [`A workflow named "${definition.name}" already exists`]);
  }
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
