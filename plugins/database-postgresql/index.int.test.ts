import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TrellisDatabaseAddress } from '#plugin-host/contract.js';
import { defaultDeniedCidrs } from '#plugin-host/reach.js';
import { PluginInputError, PluginRuntimeError } from '#plugin-host/runner.js';
import { runPluginFolder, type FolderRunOptions } from '../../test/support/plugin-folder.js';
import { createTestDatabase } from '../../test/support/services.js';

const folder = fileURLToPath(new URL('.', import.meta.url));
let connectionString: string;
/** The test PostgreSQL listens on loopback, which the default fence refuses: opened here. */
const loopbackOpen = {
  denyCidrs: [],
  trellisEndpoints: [],
  allowCidrs: ['127.0.0.0/8', '::1/128'],
  defaultDenyCidrs: defaultDeniedCidrs,
};
const run = (sql: string, params?: unknown[], options: FolderRunOptions = {}) =>
  runPluginFolder(folder, {
    parameters: params === undefined ? { sql } : { sql, params },
    specifications: { connectionString },
    host: { network: loopbackOpen },
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
      host: { network: loopbackOpen },
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
      host: { network: loopbackOpen },
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
      host: { trellisDatabase, network: loopbackOpen },
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

  it('keeps to the network fence: loopback and Unix sockets only when AllowCidrs opens loopback', async () => {
    const url = new URL(connectionString);
    const socket = `postgresql://postgres@/postgres?host=${encodeURIComponent(os.tmpdir())}`;
    const fence = (allowCidrs: string[], denyCidrs: string[] = []) => ({
      denyCidrs,
      trellisEndpoints: [],
      allowCidrs,
      defaultDenyCidrs: defaultDeniedCidrs,
    });
    const attempt = (connection: string, network: ReturnType<typeof fence>) =>
      runPluginFolder(folder, {
        parameters: { sql: 'select 1 as one' },
        specifications: { connectionString: connection },
        host: { network, trellisDatabase: null },
      });
    await expect(attempt(connectionString, fence([]))).rejects.toThrow(
      new PluginInputError(
        `PostgreSQL: refused: ${url.hostname} is a loopback address, reachable only if Plugins.Network.AllowCidrs allows it`,
      ),
    );
    const named = new URL(connectionString);
    named.hostname = 'localhost';
    await expect(attempt(named.toString(), fence([]))).rejects.toThrow(
      /^PostgreSQL: refused: localhost resolves to .* loopback address/,
    );
    await expect(attempt(socket, fence([]))).rejects.toThrow(
      /^PostgreSQL: refused: .* is a Unix socket on this machine/,
    );
    await expect(attempt(connectionString, fence([], [`${url.hostname}/32`]))).rejects.toThrow(
      /is in Plugins.Network.DenyCidrs/,
    );
    await expect(attempt(socket, fence(['127.0.0.0/8'], ['127.0.0.1/32']))).rejects.toThrow(
      /is a Unix socket on this machine/,
    );
    // Opened by the operator: the same server answers.
    expect(await attempt(connectionString, fence(['127.0.0.0/8']))).toMatchObject({
      rows: [{ one: 1 }],
    });
  });
});
