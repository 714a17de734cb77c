/**
 * Issue 16, findings 5, 6 and 7, through the whole stack on a default installation (embedded
 * database, default network fence): what a user with the workflow role can reach with the
 * built-in plugins.
 */
import { createServer, type Server } from 'node:http';
import { access, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAs, startTrellis, type Trellis } from '../support/harness.js';
import { testServices } from '../support/services.js';
import { definition, tasksOf, type Definition } from '../support/engine-support.js';

let trellis: Trellis;
/** A loopback service standing in for the Temporal UI's HTTP API; counts what reaches it. */
let local: Server;
let localHits = 0;
let outside: string;

beforeAll(async () => {
  local = createServer((_request, response) => {
    localHits += 1;
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"executions":[]}');
  });
  [trellis, outside] = await Promise.all([
    startTrellis({ worker: true, database: 'pglite' }),
    mkdtemp(path.join(tmpdir(), 'trellis-outside-')),
    new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve)),
  ]);
});
afterAll(async () => {
  await trellis?.stop();
  await new Promise<void>((resolve) => (local ? local.close(() => resolve()) : resolve()));
  if (outside) await rm(outside, { recursive: true, force: true });
});

/** Runs a definition as the workflow user; the run's tasks once it ended. */
async function runAsWorkflowUser(def: Definition) {
  const client = trellis.client(basicAs('workflow'));
  const { id: workflowId } = await client.POST('/workflows/Add', {
    body: { definition: JSON.stringify(def) },
  });
  const { executionId } = await client.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId } },
    body: { workflowId },
  });
  const execution = await client.waitForExecution(workflowId, executionId, { timeoutMs: 60_000 });
  return { execution, tasks: await tasksOf(client, workflowId, executionId) };
}

const http = (name: string, url: string) => ({
  name,
  type: { plugin: 'Net/Http' },
  parameters: { url, method: 'DELETE' },
});

describe('Net/Http on a default installation (finding 6)', () => {
  it('refuses loopback services, the metadata address and names resolving to loopback', async () => {
    const port = (local.address() as AddressInfo).port;
    const started = Date.now();
    const { execution, tasks } = await runAsWorkflowUser(
      definition([
        http('Loopback', `http://127.0.0.1:${port}/api/v1/namespaces/default/workflows/x`),
        http('Localhost', `http://localhost:${port}/api/v1/namespaces/default/workflows/x`),
        http('Metadata', 'http://169.254.169.254/latest/meta-data/iam/security-credentials/'),
        http('OwnApi', `${trellis.baseUrl}/workflows`),
      ]),
    );
    expect(execution.status).toBe('Failed');
    expect(tasks.Loopback!.message).toBe(
      `Failed: DELETE http://127.0.0.1:${port}/api/v1/namespaces/default/workflows/x refused: 127.0.0.1 is a loopback address, reachable only if Plugins.Network.AllowCidrs allows it.`,
    );
    expect(tasks.Localhost!.message).toMatch(/refused: localhost resolves to .* loopback address/);
    expect(tasks.Metadata!.message).toMatch(/refused: 169\.254\.169\.254 is a linkLocal address/);
    expect(tasks.OwnApi!.message).toMatch(/refused: 127\.0\.0\.1:\d+ is one of Trellis's own/);
    expect(localHits).toBe(0);
    // Refused at once, not retried as a network failure.
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

describe('Database/PostgreSql on a default installation (finding 5)', () => {
  // The embedded database itself has no address at all (see test/launcher.test.ts); what a task
  // could still reach is a PostgreSQL on this machine, which the network fence keeps out.
  it('refuses PostgreSQL on this machine, by TCP or Unix socket, so pg_sleep cannot hold a worker', async () => {
    const loopback = new URL(testServices().pgAdminUrl);
    const socket = `postgresql://postgres@/postgres?host=${encodeURIComponent(tmpdir())}`;
    const started = Date.now();
    const task = (name: string, connectionString: string) => ({
      name,
      type: { plugin: 'Database/PostgreSql', specifications: { connectionString } },
      parameters: { sql: 'select pg_sleep(8)' },
    });
    const { execution, tasks } = await runAsWorkflowUser(
      definition([task('Tcp', loopback.toString()), task('Socket', socket)]),
    );
    expect(execution.status).toBe('Failed');
    expect(tasks.Tcp!.message).toBe(
      `Failed: PostgreSQL: refused: ${loopback.hostname} is a loopback address, reachable only if Plugins.Network.AllowCidrs allows it.`,
    );
    expect(tasks.Socket!.message).toBe(
      `Failed: PostgreSQL: refused: ${tmpdir()} is a Unix socket on this machine, reachable only if Plugins.Network.AllowCidrs allows loopback (127.0.0.1).`,
    );
    expect(Date.now() - started).toBeLessThan(8_000);
    // The API answered all along; it still does.
    expect((await trellis.admin.GET('/workflows')).length).toBeGreaterThan(0);
  });
});

describe('Storage/Local and links already in the root (finding 7)', () => {
  it('neither writes through a dangling link nor works in a linked folder', async () => {
    const root = trellis.config.Plugins.StorageRoot;
    await mkdir(root, { recursive: true });
    await writeFile(path.join(outside, 'theirs.txt'), 'not yours');
    await symlink(path.join(outside, 'planted.txt'), path.join(root, 'dangling'));
    await symlink(outside, path.join(root, 'linked'));
    await trellis.admin.POST('/config', {
      body: {
        name: 'linked-folder',
        type: 'Storage/Local',
        version: '1.0.0',
        specifications: { folder: 'linked' },
      },
    });
    const storage = { plugin: 'Storage/Local' };
    const { execution, tasks } = await runAsWorkflowUser(
      definition([
        {
          name: 'Dangling',
          type: storage,
          parameters: { operation: 'write', path: 'dangling', content: 'x' },
        },
        {
          name: 'Read',
          type: 'linked-folder',
          parameters: { operation: 'read', path: 'theirs.txt' },
        },
        { name: 'List', type: 'linked-folder', parameters: { operation: 'list', path: '/' } },
        {
          name: 'Write',
          type: 'linked-folder',
          parameters: { operation: 'write', path: 'mine.txt', content: 'x' },
        },
      ]),
    );
    expect(execution.status).toBe('Failed');
    expect(tasks.Dangling!.message).toBe('Failed: path "dangling" leaves the storage root.');
    for (const name of ['Read', 'List', 'Write']) {
      expect(tasks[name]!.message).toBe('Failed: setting "folder" leaves the storage root.');
    }
    await expect(access(path.join(outside, 'planted.txt'))).rejects.toThrow(/ENOENT/);
    await expect(access(path.join(outside, 'mine.txt'))).rejects.toThrow(/ENOENT/);
    expect(await readFile(path.join(outside, 'theirs.txt'), 'utf8')).toBe('not yours');
  });
});
