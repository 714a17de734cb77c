/**
 * The launcher as an operator runs it: a separate process, configured by a file, stopped by a
 * signal. Against the test PostgreSQL and Temporal, and fully embedded as `npm start` runs it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '#platform/temporal/dev-server.js';
import { createTrellisClient, type TrellisClient } from '../sdk/src/index.js';
import { createTestDatabase, testServices, uniqueTaskQueue } from './support/services.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const launched: Launched[] = [];
const folders: string[] = [];
/** TCP forwarders standing in for a service that comes up late. */
const forwarders: { close(): Promise<void> }[] = [];

interface Launched {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

afterEach(async () => {
  for (const { child, exited } of launched.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  }
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
  for (const forwarder of forwarders.splice(0)) await forwarder.close();
});

/** Listens on 127.0.0.1:`port` and passes every connection on to 127.0.0.1:`target`. */
async function forward(port: number, target: number): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((incoming) => {
    const outgoing = connect(target, '127.0.0.1');
    for (const socket of [incoming, outgoing]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        incoming.destroy();
        outgoing.destroy();
      });
    }
    incoming.pipe(outgoing).pipe(incoming);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    close: () => {
      sockets.forEach((socket) => socket.destroy());
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function tempFolder(): Promise<string> {
  const folder = await mkdtemp(path.join(tmpdir(), 'trellis-launcher-'));
  folders.push(folder);
  return folder;
}

/**
 * Runs the launcher with `config` as its TRELLIS_CONFIG file: from source (`bin/trellis.ts`), or
 * compiled as `npm start` runs it (`scripts/build/run-built.mjs`, which builds dist/ when it is stale).
 */
async function launch(
  config: object,
  args: string[] = [],
  as: 'source' | 'npm start' = 'source',
): Promise<Launched> {
  const folder = await tempFolder();
  const configFile = path.join(folder, 'trellis.config.json');
  await writeFile(
    configFile,
    JSON.stringify({ DataDirectory: path.join(folder, 'data'), ...config }),
  );
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('TRELLIS')),
  );
  // One process, `node --import tsx` (resolved from the checkout, hence its cwd). The `tsx` CLI
  // wrapper would SIGKILL the script when it does not acknowledge a relayed signal within 30 ms,
  // which a busy start-up can miss.
  const program =
    as === 'source'
      ? ['--import', 'tsx', path.join(root, 'bin/trellis.ts')]
      : [path.join(root, 'scripts/build/run-built.mjs'), 'bin/trellis.js'];
  const child = spawn(process.execPath, [...program, ...args], {
    cwd: root,
    env: { ...env, TRELLIS_CONFIG: configFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // 'close', not 'exit': by then every byte the process wrote has been read.
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => resolve(code)),
  );
  const result = { child, output: () => output, exited };
  launched.push(result);
  return result;
}

/** The first match of `pattern` in the process's output, waiting until it is printed. */
async function waitForOutput(
  launchedProcess: Launched,
  pattern: RegExp,
  timeoutMs = 90_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let ended = false;
  void launchedProcess.exited.then(() => (ended = true));
  for (;;) {
    const done = ended; // read before matching: once ended, all output has arrived
    const match = pattern.exec(launchedProcess.output());
    if (match) return match[1] ?? match[0];
    if (done || Date.now() > deadline) {
      throw new Error(
        `${pattern} not printed (${done ? 'process ended' : 'timed out'}); output:\n${launchedProcess.output()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The API URL from the banner, once it is printed. */
const bannerApiUrl = (launchedProcess: Launched, timeoutMs?: number) =>
  waitForOutput(launchedProcess, /^ {2}API {10}(http\S+)$/m, timeoutMs);

/** A fresh database on the test PostgreSQL, the test Temporal, and an `ops` admin user. */
async function sharedServicesConfig() {
  return {
    Server: { Port: 0 },
    // A worker's probes: any free port (test files run side by side).
    Metrics: { WorkerPort: 0 },
    Database: { Url: await createTestDatabase() },
    Temporal: { Address: testServices().temporalAddress, TaskQueue: uniqueTaskQueue() },
    Security: {
      Basic: { Users: [{ Name: 'ops', Password: 'launcher-test', Roles: ['admin'] }] },
    },
  };
}

/** Adds a workflow, runs it and waits for the run's final status. */
async function runToEnd(client: TrellisClient, definition: object): Promise<string> {
  const workflow = await client.POST('/workflows/Add', {
    body: { definition: JSON.stringify(definition) },
  });
  const started = await client.POST('/workflows/{workflowId}/executions', {
    params: { path: { workflowId: workflow.id } },
    body: { workflowId: workflow.id },
  });
  const finished = await client.waitForExecution(workflow.id, started.executionId, {
    timeoutMs: 60_000,
  });
  return finished.status;
}

async function stopWith(launchedProcess: Launched, signal: NodeJS.Signals): Promise<number | null> {
  launchedProcess.child.kill(signal);
  return launchedProcess.exited;
}

describe('the launcher', () => {
  it('starts against PostgreSQL and Temporal, serves /version, and exits 0 on SIGTERM', async () => {
    const { temporalAddress } = testServices();
    const trellis = await launch({ ...(await sharedServicesConfig()), Logging: { Level: 'info' } });
    const apiUrl = await bannerApiUrl(trellis);
    expect(trellis.output()).toContain(`Temporal     ${temporalAddress}`);
    expect(trellis.output()).toContain(`API docs     ${apiUrl}/docs`);

    const version = await fetch(`${apiUrl}/version`);
    expect(version.status).toBe(200);
    expect(((await version.json()) as { data: { version: string } }).data.version).toMatch(
      /^\d+\.\d+\.\d+/,
    );
    const workflows = await fetch(`${apiUrl}/workflows`, {
      headers: { authorization: `Basic ${Buffer.from('ops:launcher-test').toString('base64')}` },
    });
    expect(workflows.status).toBe(200);

    expect(await stopWith(trellis, 'SIGTERM')).toBe(0);
    expect(trellis.output()).toMatch(/stopped worker[\s\S]*stopped API[\s\S]*stopped database/);
  });

  it('runs fully embedded as `npm start` does: compiled, PGlite, a Temporal child with UI, a generated admin', async () => {
    const trellis = await launch(
      { Server: { Port: 0 }, Temporal: { Port: await freePort(), UiPort: await freePort() } },
      [],
      'npm start',
    );
    const apiUrl = await bannerApiUrl(trellis, 150_000);
    const output = trellis.output();
    // Compiled JavaScript: no TypeScript loader in the process's arguments or options.
    const commandLine = await readFile(`/proc/${trellis.child.pid}/cmdline`, 'utf8');
    expect(commandLine.split('\0')).toContain('bin/trellis.js');
    expect(commandLine).not.toMatch(/tsx|ts-node/);
    const environment = await readFile(`/proc/${trellis.child.pid}/environ`, 'utf8');
    expect(
      environment.split('\0').find((line) => line.startsWith('NODE_OPTIONS=')) ?? '',
    ).not.toMatch(/tsx|ts-node/);
    expect(output).toMatch(
      /Temporal UI {2}http:\/\/127\.0\.0\.1:\d+\/namespaces\/default\/workflows/,
    );
    const password = /password "([^"]+)"/.exec(output)?.[1];
    expect(password).toBeTruthy();

    const authorized = await fetch(`${apiUrl}/workflows`, {
      headers: { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}` },
    });
    expect(authorized.status).toBe(200);
    expect((await fetch(`${apiUrl}/workflows`)).status).toBe(401);

    // The compiled worker runs the prebuilt workflow bundle, and a plugin unpacked into the data
    // directory's cache still imports the host's packages (Data/Json needs jsonata).
    const client = createTrellisClient({
      baseUrl: apiUrl,
      basic: { username: 'admin', password: password! },
    });
    const definition = {
      name: 'Compiled',
      tasks: [
        {
          name: 'Sum',
          type: { plugin: 'Data/Json' },
          parameters: { input: [1, 2], expression: '$sum($)' },
        },
      ],
    };
    expect(await runToEnd(client, definition)).toBe('Completed');

    // Ctrl-C in a terminal.
    expect(await stopWith(trellis, 'SIGINT')).toBe(0);
    expect(trellis.output()).toContain('stopped Temporal dev server');
  });

  it('runs the api and worker roles as separate processes sharing PostgreSQL and Temporal', async () => {
    const config = await sharedServicesConfig();
    const api = await launch(config, ['--role', 'api']);
    const apiUrl = await bannerApiUrl(api);
    expect(api.output()).not.toContain('Worker       polling');
    const worker = await launch(config, ['--role', 'worker']);
    await waitForOutput(worker, /^ {2}Worker {7}polling/m);
    expect(worker.output()).not.toMatch(/^ {2}API /m);

    const client = createTrellisClient({
      baseUrl: apiUrl,
      basic: { username: 'ops', password: 'launcher-test' },
    });
    const definition = { name: 'Split', tasks: [{ name: 'Only', type: { plugin: 'Flow/NoOp' } }] };
    expect(await runToEnd(client, definition)).toBe('Completed');

    expect(await stopWith(worker, 'SIGTERM')).toBe(0);
    expect(await stopWith(api, 'SIGTERM')).toBe(0);
  });

  it('names the setting of a taken port and keeps no admin a failed start made; the next start prints it, and the console', async () => {
    const taken = await freePort();
    const otherProgram = createServer();
    await new Promise<void>((resolve) => otherProgram.listen(taken, '127.0.0.1', resolve));
    const dataDirectory = path.join(await tempFolder(), 'data');
    const config = {
      DataDirectory: dataDirectory,
      Server: { Port: taken },
      Temporal: { Port: await freePort(), UiPort: await freePort() },
    };
    const refused = await launch(config);
    expect(await refused.exited).toBe(1);
    expect(refused.output()).toContain(
      `port ${taken} (Server.Port) is taken by another program on 127.0.0.1: stop that program, or set Server.Port to a free port (TRELLIS__Server__Port=<port>; 0 picks any free one).`,
    );
    expect(refused.output()).not.toMatch(/password/);
    await expect(stat(path.join(dataDirectory, 'admin-user.json'))).rejects.toThrow(/ENOENT/);

    await new Promise((resolve) => otherProgram.close(resolve));
    const trellis = await launch(config);
    const apiUrl = await bannerApiUrl(trellis, 150_000);
    const password = /password "([^"]+)"/.exec(trellis.output())?.[1];
    expect(password).toBeTruthy();
    expect(trellis.output()).toContain(`  Console      ${apiUrl}/ui/`);
    const home = await fetch(`${apiUrl}/`, {
      headers: { accept: 'text/html' },
      redirect: 'manual',
    });
    expect(home.headers.get('location')).toBe('/ui/');
    const signedIn = await fetch(`${apiUrl}/workflows`, {
      headers: { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}` },
    });
    expect(signedIn.status).toBe(200);
    expect(await stopWith(trellis, 'SIGTERM')).toBe(0);
  });

  it('stops cleanly when SIGTERM arrives while it is still starting', async () => {
    const trellis = await launch({ ...(await sharedServicesConfig()), Logging: { Level: 'info' } });
    await waitForOutput(trellis, /connected to Temporal/);
    expect(await stopWith(trellis, 'SIGTERM')).toBe(0);
    expect(trellis.output()).toContain('stopped Temporal connection');
    expect(trellis.output()).toContain('stopped database');
    expect(trellis.output()).not.toContain('Press Ctrl-C to stop.');
  });

  it('removes at start what a killed process left, and serves the embedded database on no socket', async () => {
    const dataDirectory = path.join(await tempFolder(), 'data');
    const config = {
      DataDirectory: dataDirectory, // no Database.Url: embedded PGlite
      Server: { Port: 0 },
      Temporal: { Address: testServices().temporalAddress, TaskQueue: uniqueTaskQueue() },
      Security: {
        Basic: { Users: [{ Name: 'ops', Password: 'launcher-test', Roles: ['admin'] }] },
      },
    };
    /** The paths of the Unix sockets the process holds, as the kernel lists them. */
    const unixSocketPathsOf = async (pid: number): Promise<string[]> => {
      const inodes = new Set<string>();
      for (const fd of await readdir(`/proc/${pid}/fd`)) {
        const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode) inodes.add(inode);
      }
      const listed = (await readFile('/proc/net/unix', 'utf8')).split('\n');
      return listed
        .map((line) => line.trim().split(/\s+/))
        .filter((fields) => inodes.has(fields[6] ?? '') && fields[7] !== undefined)
        .map((fields) => fields[7]!);
    };
    const exists = (file: string) =>
      stat(file).then(
        () => true,
        () => false,
      );
    // A live process's folder, which no start may touch: this test runner is alive.
    const live = await mkdtemp(path.join(tmpdir(), `trellis-pglite-${process.pid}-`));
    folders.push(live);

    const first = await launch(config);
    await bannerApiUrl(first);
    const firstPid = first.child.pid!;
    // No other process can reach the embedded database: it has no socket, file or port.
    expect(await unixSocketPathsOf(firstPid)).not.toContainEqual(expect.stringMatching(/PGSQL/));
    // What an earlier version, killed, left in the temporary folder: its database socket folder.
    const earlierSocketFolder = path.join(tmpdir(), `trellis-pglite-${firstPid}-AbC123`);
    await mkdir(earlierSocketFolder);
    folders.push(earlierSocketFolder);
    // What a worker killed while unpacking a plugin package leaves in the cache: a staging folder
    // named after it, and one of an earlier version (no pid), old by now.
    const cache = path.join(dataDirectory, 'plugin-cache');
    const sha = 'c'.repeat(64);
    const staging = path.join(cache, `${sha}.tmp-${firstPid}-0b4f9f0e-8a51-4a55-9d6e-3f9a1b2c3d4e`);
    const oldStaging = path.join(cache, `${sha}.tmp-5d1c6a2e-1f3b-4c9d-8e7a-6b5c4d3e2f1a`);
    await mkdir(path.join(staging, 'partial'), { recursive: true });
    await mkdir(oldStaging, { recursive: true });
    const dayAgo = new Date(Date.now() - 24 * 60 * 60 * 1000);
    await utimes(oldStaging, dayAgo, dayAgo);

    first.child.kill('SIGKILL');
    await first.exited;
    // Killed: nothing was cleaned up.
    expect(await exists(staging)).toBe(true);

    const second = await launch(config);
    await bannerApiUrl(second);
    expect(await exists(earlierSocketFolder)).toBe(false);
    expect(await exists(staging)).toBe(false);
    expect(await exists(oldStaging)).toBe(false);
    expect(await exists(live)).toBe(true);
    expect(await stopWith(second, 'SIGTERM')).toBe(0);
  });

  it('waits for a PostgreSQL and a Temporal that come up after it, a line per try', async () => {
    const shared = await sharedServicesConfig();
    const database = new URL(shared.Database.Url);
    const [databasePort, temporalPort] = [await freePort(), await freePort()];
    const late = new URL(shared.Database.Url);
    late.host = `127.0.0.1:${databasePort}`;
    const trellis = await launch({
      ...shared,
      Database: { Url: late.toString() },
      Temporal: { ...shared.Temporal, Address: `127.0.0.1:${temporalPort}` },
      Logging: { Level: 'info' },
    });
    await waitForOutput(trellis, /PostgreSQL at 127\.0\.0\.1:\d+\/\w+ is not reachable yet/);
    // Nothing is migrated, nor anything else started, while the database does not answer.
    expect(trellis.output()).not.toMatch(/migration|Temporal at/);
    forwarders.push(await forward(databasePort, Number(database.port)));
    await waitForOutput(trellis, /PostgreSQL at .* answered/);
    await waitForOutput(trellis, /Temporal at 127\.0\.0\.1:\d+ is not reachable yet/);
    const [, temporalTargetPort] = shared.Temporal.Address.split(':');
    forwarders.push(await forward(temporalPort, Number(temporalTargetPort)));

    const apiUrl = await bannerApiUrl(trellis);
    const client = createTrellisClient({
      baseUrl: apiUrl,
      basic: { username: 'ops', password: 'launcher-test' },
    });
    const definition = { name: 'Late', tasks: [{ name: 'Only', type: { plugin: 'Flow/NoOp' } }] };
    expect(await runToEnd(client, definition)).toBe('Completed');
    expect(await stopWith(trellis, 'SIGTERM')).toBe(0);
  });

  it('gives up after Startup.WaitSeconds, saying what to check', async () => {
    const shared = await sharedServicesConfig();
    const nowhere = new URL(shared.Database.Url);
    nowhere.host = `127.0.0.1:${await freePort()}`;
    const trellis = await launch({
      ...shared,
      Database: { Url: nowhere.toString() },
      Startup: { WaitSeconds: 2 },
    });
    expect(await trellis.exited).toBe(1);
    const output = trellis.output();
    expect(output.match(/is not reachable yet/g)?.length).toBeGreaterThanOrEqual(2);
    expect(output).toMatch(
      /PostgreSQL at 127\.0\.0\.1:\d+\/\w+ did not answer in \d+ s \(\d+ tries, Startup\.WaitSeconds is 2\): .*ECONNREFUSED.* Check Database\.Url/,
    );
  });

  it('refuses --role api without Temporal.Address and a PostgreSQL, saying why', async () => {
    const trellis = await launch({}, ['--role', 'api']);
    expect(await trellis.exited).toBe(2);
    expect(trellis.output()).toMatch(/--role api needs Database\.Url .* and Temporal\.Address/);
  });
});
