/**
 * Runs a command against a real Trellis started for it, then stops Trellis: the contract checks
 * of CI (scripts/contract/contract-fuzz.sh, scripts/contract/python-client.sh) and anyone reproducing them.
 *
 *   node --import tsx scripts/dev/with-trellis.ts -- <command> [args...]
 *
 * Trellis is the compiled build (`node scripts/build/run-built.mjs bin/trellis.js`, which builds dist/
 * when it is stale) with everything embedded (PGlite, a Temporal dev server on free ports) in a
 * scratch data directory, and a configuration written here. The command gets TRELLIS_URL,
 * TRELLIS_USER and TRELLIS_PASSWORD and runs in the repository's root; its exit code is this
 * script's. Trellis's log goes to `<scratch>/trellis.log`, printed (its end) when the command
 * fails or Trellis stops on its own; TRELLIS_KEEP_SCRATCH=1 keeps the scratch folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const separator = process.argv.indexOf('--');
const command = separator === -1 ? [] : process.argv.slice(separator + 1);
if (command.length === 0) {
  console.error('usage: node --import tsx scripts/dev/with-trellis.ts -- <command> [args...]');
  process.exit(2);
}

/** A fixed user, so that a failure can be replayed (`st replay`) against the same server. */
const user = { name: 'admin', password: process.env.TRELLIS_PASSWORD ?? 'contract-admin' };
const startSeconds = Number(process.env.TRELLIS_START_SECONDS ?? 120);
const buildIfStale = `
  const { isBuildCurrent } = await import('./scripts/build/build-state.mjs');
  if (!(await isBuildCurrent())) await (await import('./scripts/build/build.mjs')).build();
`;

// Build first, in the open, when dist/ is older than the sources: run-built.mjs would do it
// silently inside the start's timeout.
if ((await run([process.execPath, '--input-type=module', '-e', buildIfStale], process.env)) !== 0) {
  console.error('with-trellis: the build failed');
  process.exit(1);
}

const scratch = await mkdtemp(path.join(tmpdir(), 'trellis-contract-'));
// Approval links: a client cannot make a link's token (it is the credential), so the server
// notifies a receiver here of every approval it asks for, and the command finds the tokens in
// a file (TRELLIS_APPROVAL_LINKS, one a line, newest last).
const linksFile = path.join(scratch, 'approval-links.txt');
await writeFile(linksFile, '');
const receiver = await receiveApprovalLinks(linksFile);
const config = {
  // Any free port: the banner says which.
  Server: { Port: 0 },
  DataDirectory: path.join(scratch, 'data'),
  // `/health` and `/metrics` are operations of the contract; served only when enabled.
  HealthCheck: { Enabled: true },
  Metrics: { Enabled: true },
  Temporal: { Port: 0, UiPort: 0 },
  Security: {
    // Plain text (the server warns once and hashes it on first use): a scratch server.
    Basic: { Users: [{ Name: user.name, Password: user.password, Roles: ['admin'] }] },
    // A fuzzer sends wrong credentials on purpose, thousands of times, all from 127.0.0.1:
    // Schemathesis checks that every operation refuses them (user "SCHEMATHESIS-INVALID-VALUE",
    // no credentials, a generated Authorization header). With the default limits the address
    // would be locked after 100 failures and every later request, the valid admin's included,
    // answered 429, so the rest of the run would test the lock instead of the API. The limits
    // stay on (a 429 is still in the contract); only their thresholds are out of reach.
    RateLimits: {
      Enabled: true,
      FailedLoginsPerUser: 1_000_000,
      FailedLoginsPerAddress: 1_000_000,
      RequestsPerUserPerMinute: 1_000_000,
    },
  },
  Notifications: {
    Webhooks: [
      {
        Url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`,
        Events: ['ApprovalRequested'],
        Secret: `whsec_${Buffer.from('contract-checks-receiver').toString('base64')}`,
      },
    ],
  },
  Logging: { Level: 'info', Format: 'json' },
};
const configFile = path.join(scratch, 'trellis.config.json');
await writeFile(configFile, JSON.stringify(config, null, 2));
const logFile = path.join(scratch, 'trellis.log');
const log = createWriteStream(logFile);

const trellis = spawn(process.execPath, ['scripts/build/run-built.mjs', 'bin/trellis.js'], {
  cwd: root,
  env: { ...process.env, TRELLIS_CONFIG: configFile },
  stdio: ['ignore', 'pipe', 'pipe'],
});
trellis.stdout.pipe(log, { end: false });
trellis.stderr.pipe(log, { end: false });

let exitCode = 1;
try {
  const url = await apiUrl(trellis, startSeconds * 1000);
  console.error(`with-trellis: Trellis is up at ${url} (log: ${logFile})`);
  exitCode = await run(command, {
    ...process.env,
    TRELLIS_URL: url,
    TRELLIS_USER: user.name,
    TRELLIS_PASSWORD: user.password,
    TRELLIS_APPROVAL_LINKS: linksFile,
  });
  if (trellis.exitCode !== null) {
    console.error(`with-trellis: Trellis stopped during the run (exit ${trellis.exitCode})`);
    exitCode = exitCode || 1;
  }
} catch (error) {
  console.error(`with-trellis: ${(error as Error).message}`);
} finally {
  await stop(trellis);
  await new Promise((resolve) => receiver.close(resolve));
  log.end();
  if (exitCode !== 0) await printLogTail(logFile);
  if (!process.env.TRELLIS_KEEP_SCRATCH) await rm(scratch, { recursive: true, force: true });
}
process.exit(exitCode);

/** A receiver of notification events that writes each approval link's token to `file`. */
async function receiveApprovalLinks(file: string): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      try {
        const event = JSON.parse(body) as { data?: { approval?: { link?: { url?: unknown } } } };
        const url = event.data?.approval?.link?.url;
        if (typeof url === 'string') appendFileSync(file, `${url.split('/').at(-1)}\n`);
      } catch {
        // Not an event with a link: nothing to keep.
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** The API URL from the banner (`  API          http://127.0.0.1:41234`). */
function apiUrl(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => fail(new Error(`Trellis did not start within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      seen = (seen + chunk.toString()).slice(-4096);
      const match = /^\s*API\s+(http:\/\/\S+)\s*$/m.exec(seen);
      if (match?.[1]) done(match[1]);
    };
    const onExit = (code: number | null) =>
      fail(new Error(`Trellis exited (code ${code}) before it was up`));
    function done(url: string) {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      resolve(url);
    }
    function fail(error: Error) {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      reject(error);
    }
    child.stdout?.on('data', onData);
    child.on('exit', onExit);
  });
}

function run(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: root, env, stdio: 'inherit' });
    child.on('error', (error) => {
      console.error(`with-trellis: cannot run ${argv[0]}: ${error.message}`);
      resolve(127);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/** SIGTERM, as a process manager would; SIGKILL after 30 s. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

async function printLogTail(file: string): Promise<void> {
  const lines = (await readFile(file, 'utf8').catch(() => '')).trimEnd().split('\n');
  console.error(`with-trellis: the last lines of Trellis's log:\n${lines.slice(-40).join('\n')}`);
}
