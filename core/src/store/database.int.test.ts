import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '#platform/config/load.js';
import { Unavailable } from '#definition/errors.js';
import { createLogger } from '#platform/logging.js';
import { createTestDatabase } from '../../../test/support/services.js';
import { checkDatabase, openDatabase, type TrellisDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';
import * as workflowRepository from './workflow-repository.js';

const logger = createLogger({ Level: 'silent' });
const directories: string[] = [];

async function dataDirectory(): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'trellis-db-'));
  directories.push(directory);
  return directory;
}

async function openEmbedded(directory: string): Promise<TrellisDatabase> {
  return openDatabase(
    buildConfig({ DataDirectory: directory, Logging: { Level: 'silent' } }),
    logger,
  );
}

afterAll(async () => {
  await Promise.all(
    directories.map((directory) => rm(directory, { recursive: true, force: true })),
  );
});

const modes = [
  {
    mode: 'PostgreSQL (Database.Url)',
    open: async () =>
      openDatabase(
        buildConfig({
          Database: { Url: await createTestDatabase() },
          Logging: { Level: 'silent' },
        }),
        logger,
      ),
  },
  { mode: 'embedded PGlite', open: async () => openEmbedded(await dataDirectory()) },
];

describe.each(modes)('$mode', ({ open }) => {
  let database: TrellisDatabase;
  beforeAll(async () => {
    database = await open();
    await migrateToLatest(database.db, logger);
  });
  afterAll(() => database?.close());

  it('reads values back with the same types', async () => {
    const { db } = database;
    await checkDatabase(db);
    const workflow = await workflowRepository.insert(db, {
      name: 'types',
      definition: '{"name":"types"}',
    });
    const executionId = crypto.randomUUID();
    await db
      .insertInto('workflowExecution')
      .values({
        id: executionId,
        workflowId: workflow.id,
        workflowName: 'types',
        definition: '{}',
        status: 'Running',
        message: '',
        triggerId: null,
        temporalWorkflowId: executionId,
        executionStart: new Date('2026-01-02T03:04:05.678Z'),
        executionEnd: null,
      })
      .execute();
    const log = await db
      .insertInto('logEntry')
      .values({
        id: crypto.randomUUID(),
        executionId,
        taskExecutionId: null,
        dedupeKey: 'k',
        level: 'Info',
        message: 'm',
        exception: null,
        timeStamp: new Date(),
      })
      .returning(['seq'])
      .executeTakeFirstOrThrow();
    await db
      .insertInto('plugin')
      .values({
        id: crypto.randomUUID(),
        type: 'Test/Types',
        version: '1.0.0',
        description: '',
        specifications: JSON.stringify([
          { key: 'a', type: 'string', required: true, secret: false, description: '' },
        ]),
        parametersSchema: JSON.stringify({ type: 'object' }),
        source: 'builtin',
        sha256: 'abc',
        package: Buffer.from([0, 1, 2, 255]),
      })
      .execute();

    const execution = await db
      .selectFrom('workflowExecution')
      .selectAll()
      .where('id', '=', executionId)
      .executeTakeFirstOrThrow();
    expect(execution.executionStart).toEqual(new Date('2026-01-02T03:04:05.678Z'));
    expect(execution.executionEnd).toBeNull();
    expect(typeof log.seq).toBe('string');
    const plugin = await db.selectFrom('plugin').selectAll().executeTakeFirstOrThrow();
    expect(Buffer.isBuffer(plugin.package)).toBe(true);
    expect([...plugin.package]).toEqual([0, 1, 2, 255]);
    expect(plugin.specifications).toEqual([
      { key: 'a', type: 'string', required: true, secret: false, description: '' },
    ]);
    expect(plugin.installedAt).toBeInstanceOf(Date);
  });

  it('serves concurrent queries and transactions without mixing them up', async () => {
    const { db } = database;
    const names = Array.from({ length: 40 }, (_, index) => `concurrent-${index}`);
    await Promise.all([
      ...names.map((name) => workflowRepository.insert(db, { name, definition: name })),
      db.transaction().execute(async (trx) => {
        await workflowRepository.insert(trx, { name: 'in-trx', definition: 'x' });
        await new Promise((resolve) => setTimeout(resolve, 50));
        await workflowRepository.insert(trx, { name: 'in-trx-2', definition: 'y' });
      }),
      db
        .transaction()
        .execute(async (trx) => {
          await workflowRepository.insert(trx, { name: 'rolled-back', definition: 'z' });
          throw new Error('abort');
        })
        .catch(() => undefined),
    ]);
    const found = await Promise.all(names.map((name) => workflowRepository.findByName(db, name)));
    expect(found.map((row) => row?.definition)).toEqual(names);
    expect(await workflowRepository.findByName(db, 'in-trx-2')).toBeDefined();
    expect(await workflowRepository.findByName(db, 'rolled-back')).toBeUndefined();
  });

  // Last: it closes the shared database (afterAll's close is then a no-op).
  it('refuses queries after close', async () => {
    await database.close();
    await database.close(); // idempotent
    await expect(checkDatabase(database.db)).rejects.toThrow(/destroyed/);
  });
});

describe('embedded PGlite', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await dataDirectory();
  });

  it('persists data across close and reopen, in <DataDirectory>/pglite', async () => {
    const first = await openEmbedded(directory);
    expect(first.embedded).toBe(true);
    await migrateToLatest(first.db, logger);
    const stored = await workflowRepository.insert(first.db, {
      name: 'persisted',
      definition: '{"name":"persisted"}',
    });
    await first.close();

    const second = await openEmbedded(directory);
    try {
      await migrateToLatest(second.db, logger);
      expect(await workflowRepository.findById(second.db, stored.id)).toEqual(stored);
    } finally {
      await second.close();
    }
    expect(await readFile(path.join(directory, 'pglite', 'PG_VERSION'), 'utf8')).toMatch(/^\d+/);
  });

  it('refuses a second open of the same data directory while the first is open', async () => {
    const first = await openEmbedded(directory);
    try {
      await expect(openEmbedded(directory)).rejects.toThrow(/already open in this process/);
    } finally {
      await first.close();
    }
  });

  it('takes over a lock file left by a process that died', async () => {
    await writeFile(path.join(directory, 'pglite.lock'), '999999999');
    const reopened = await openEmbedded(directory);
    await reopened.close();
  });
});

describe('external PostgreSQL', () => {
  it('fails to open as Unavailable naming the problem when the server is unreachable', async () => {
    const config = buildConfig({
      Database: { Url: 'postgres://nobody@127.0.0.1:1/none' },
      Logging: { Level: 'silent' },
    });
    const error = await openDatabase(config, logger).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Unavailable);
    expect(error).toMatchObject({
      message: expect.stringMatching(/^Database unavailable: .*ECONNREFUSED/),
    });
  });

  it('turns a lost connection into Unavailable and recovers on the next query', async () => {
    const database = await modes[0]!.open();
    try {
      // What a PostgreSQL restart does to a pooled connection.
      const error = await sql`select pg_terminate_backend(pg_backend_pid())`
        .execute(database.db)
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Unavailable);
      expect(error).toMatchObject({
        message: expect.stringMatching(/^Database unavailable: /),
      });
      await checkDatabase(database.db);
    } finally {
      await database.close();
    }
  });

  it('outlives a connection lost while a transaction holds it between two queries', async () => {
    const database = await modes[0]!.open();
    const killer = await modes[0]!.open();
    try {
      const outcome = await database.db
        .transaction()
        .execute(async (trx) => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
          // Another session ends this one while it is checked out and idle, as a PostgreSQL
          // restart does: the server's goodbye arrives with no query to take it. Unheard, the
          // client's 'error' event would end the process.
          await sql`select pg_terminate_backend(${rows[0]!.pid})`.execute(killer.db);
          await new Promise((resolve) => setTimeout(resolve, 200));
          await sql`select 1`.execute(trx);
        })
        .catch((caught: unknown) => caught);
      expect(outcome).toBeInstanceOf(Unavailable);
      await checkDatabase(database.db);
    } finally {
      await killer.close();
      await database.close();
    }
  });

  it('keeps query errors as they are (not Unavailable)', async () => {
    const database = await modes[0]!.open();
    try {
      const error = await sql`select * from no_such_table`
        .execute(database.db)
        .catch((caught: unknown) => caught);
      expect(error).not.toBeInstanceOf(Unavailable);
      expect(error).toMatchObject({ code: '42P01' });
    } finally {
      await database.close();
    }
  });
});
