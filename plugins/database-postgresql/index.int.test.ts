import { mkdtemp, rm, stat, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '../../core/src/config/load.js';
import { openDatabase } from '../../core/src/db/database.js';
import { createLogger } from '../../core/src/logging.js';
import type { TrellisDatabaseAddress } from '../../core/src/plugins/contract.js';
import { PluginInputError, PluginRuntimeError } from '../../core/src/plugins/runner.js';
import { runPluginFolder, type FolderRunOptions } from '../../core/src/plugins/testing.js';
import { createTestDatabase } from '../../test/support/services.js';

const folder = fileURLToPath(new URL('.', import.meta.url));
let connectionString: string;
const run = (sql: string, params?: unknown[], options: FolderRunOptions = {}) =>
  runPluginFolder(folder, {
    parameters: params === undefined ? { sql } : { sql, params },
    specifications: { connectionString },
    ...options,
  });

beforeAll(async () => {
  connectionString = await createTestDatabase();
});

describe('Database/PostgreSql', () => {
  it('runs parameterised statements and returns rows', async () => {
    await run(
      'create table orders (id serial primary key, customer text not null, total numeric, placed date)',
    );
    const inserted = await run(
      'insert into orders (customer, total, placed) values ($1, $2, $3), ($4, $5, $6) returning id',
      ['Ann', 10.5, '2024-01-02', "Bob'); drop table orders; --", 4, '2024-02-03'],
    );
    expect(inserted).toEqual({
      command: 'INSERT',
      rowCount: 2,
      fields: ['id'],
      rows: [{ id: 1 }, { id: 2 }],
    });
    const selected = await run(
      'select customer, total, placed from orders where total > $1 order by id',
      [1],
    );
    expect(selected).toEqual({
      command: 'SELECT',
      rowCount: 2,
      fields: ['customer', 'total', 'placed'],
      rows: [
        { customer: 'Ann', total: '10.5', placed: expect.stringMatching(/^2024-01-0[12]T/) },
        {
          customer: "Bob'); drop table orders; --",
          total: '4',
          placed: expect.stringMatching(/^2024-02-0[23]T/),
        },
      ],
    });
  });

  it('reports SQL mistakes as input errors with the SQLSTATE', async () => {
    const syntax = run('selec 1');
    await expect(syntax).rejects.toThrow(PluginInputError);
    await expect(syntax).rejects.toThrow(
      /PostgreSQL: syntax error at or near "selec" \(at character 1\) \[SQLSTATE 42601\]/,
    );
    await expect(run('select * from no_such_table')).rejects.toThrow(/\[SQLSTATE 42P01\]/);
  });

  it('refuses several statements before running any of them, with or without parameters', async () => {
    for (const params of [undefined, [], [1]]) {
      const attempt = run(
        'create table first_of_two (id int); create table second_of_two (id int)',
        params,
      );
      await expect(attempt).rejects.toThrow(PluginInputError);
      await expect(attempt).rejects.toThrow(
        /the sql holds more than one statement; this plugin runs one per task/,
      );
    }
    const created = await run(
      "select count(*)::int as tables from pg_tables where tablename in ('first_of_two', 'second_of_two')",
    );
    expect(created).toMatchObject({ rows: [{ tables: 0 }] });
    // One statement with a trailing semicolon, and a semicolon inside a literal, are one statement.
    expect(await run("select 'a;b' as text;")).toMatchObject({ rows: [{ text: 'a;b' }] });
  });

  it('reports an unreachable server as a retryable failure', async () => {
    const url = new URL(connectionString);
    url.port = '1';
    const attempt = runPluginFolder(folder, {
      parameters: { sql: 'select 1' },
      specifications: { connectionString: url.toString() },
    });
    await expect(attempt).rejects.toThrow(PluginRuntimeError);
  });

  it('ends a long statement when canceled, and enforces the statement timeout', async () => {
    const controller = new AbortController();
    const started = performance.now();
    const attempt = run('select pg_sleep(30)', [], { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('canceled by user')), 300);
    await expect(attempt).rejects.toThrow('canceled by user');
    expect(performance.now() - started).toBeLessThan(5_000);

    const timedOut = runPluginFolder(folder, {
      parameters: { sql: 'select pg_sleep(30)' },
      specifications: { connectionString, statementTimeoutMilliseconds: 200 },
    });
    await expect(timedOut).rejects.toThrow(/canceling statement due to statement timeout/);
  });

  it('needs a connection string setting', async () => {
    await expect(runPluginFolder(folder, { parameters: { sql: 'select 1' } })).rejects.toThrow(
      /specification "connectionString" is required/,
    );
  });
});

describe("Database/PostgreSql and Trellis's own database", () => {
  const selectOne = (connection: string, trellisDatabase: TrellisDatabaseAddress | null) =>
    runPluginFolder(folder, {
      parameters: { sql: 'select 1 as one' },
      specifications: { connectionString: connection },
      host: { trellisDatabase },
    });
  const refusal = new PluginInputError(
    "PostgreSQL: this is Trellis's own database, which tasks may not use (Plugins.Database.AllowTrellisDatabase)",
  );

  it('refuses the external Database.Url by host, port and database, under another name too', async () => {
    const url = new URL(connectionString);
    const trellis = {
      host: url.hostname,
      port: Number(url.port),
      database: url.pathname.slice(1),
    };
    await expect(selectOne(connectionString, trellis)).rejects.toThrow(refusal);
    const alias = new URL(connectionString);
    alias.hostname = 'localhost';
    await expect(selectOne(alias.toString(), trellis)).rejects.toThrow(refusal);
    const viaHostParameter = new URL(connectionString);
    viaHostParameter.hostname = 'elsewhere.invalid';
    viaHostParameter.searchParams.set('host', url.hostname);
    await expect(selectOne(viaHostParameter.toString(), trellis)).rejects.toThrow(refusal);

    const unknownHost = selectOne('postgres://u@no-such-host.invalid/db', trellis);
    await expect(unknownHost).rejects.toThrow(PluginRuntimeError);
    await expect(unknownHost).rejects.toThrow(/^PostgreSQL: getaddrinfo/);

    // Another database of the same server is not Trellis's; nothing is refused when allowed.
    const other = await createTestDatabase();
    expect(await selectOne(other, trellis)).toMatchObject({ rows: [{ one: 1 }] });
    expect(await selectOne(connectionString, null)).toMatchObject({ rows: [{ one: 1 }] });
  });

  it('refuses the embedded database socket, which lives in a folder only this user can open', async () => {
    const dataDirectory = await mkdtemp(path.join(os.tmpdir(), 'trellis-embedded-'));
    const embedded = await openDatabase(
      buildConfig({ DataDirectory: dataDirectory }),
      createLogger({ Level: 'silent' }),
    );
    const links = await mkdtemp(path.join(os.tmpdir(), 'trellis-links-'));
    try {
      const socketDirectory = embedded.socketDirectory!;
      expect((await stat(socketDirectory)).mode & 0o777).toBe(0o700);
      const socket = (host: string) =>
        `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(host)}`;
      const trellis = { socketDirectory };
      await expect(selectOne(socket(socketDirectory), trellis)).rejects.toThrow(refusal);
      await expect(selectOne(socket(`${socketDirectory}/`), trellis)).rejects.toThrow(refusal);
      await symlink(socketDirectory, path.join(links, 'alias'));
      await expect(selectOne(socket(path.join(links, 'alias')), trellis)).rejects.toThrow(refusal);
      // Without the refusal the socket answers, as a superuser, with no password.
      expect(await selectOne(socket(socketDirectory), null)).toMatchObject({
        rows: [{ one: 1 }],
      });
    } finally {
      await embedded.close();
      await rm(links, { recursive: true, force: true });
      await rm(dataDirectory, { recursive: true, force: true });
    }
  });
});
