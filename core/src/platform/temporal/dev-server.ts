/**
 * Runs `temporal server start-dev` as a child process: the embedded Temporal of `npm start` and
 * the one server the integration tests share.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import type { Logger } from '../logging.js';
import { searchAttributeTypeName, trellisSearchAttributes } from '#protocol/search-attributes.js';

export interface DevServerOptions {
  cliPath: string;
  /** gRPC port; a free one when absent. */
  port?: number;
  /** Web UI port; a free one when absent. Ignored when `headless`. */
  uiPort?: number;
  /** SQLite file that keeps runs across restarts; in memory when absent. */
  dbFile?: string;
  namespace: string;
  /** Namespaces to create beside `namespace` (projects' own, `Projects.Namespaces`). */
  otherNamespaces?: readonly string[];
  logger: Logger;
  /** No Web UI (tests). */
  headless?: boolean;
  /** How long to wait for the server to answer (default 60 s). */
  startTimeoutMs?: number;
}

export interface DevServer {
  /** `host:port` for `Connection.connect`. */
  address: string;
  /** Web UI URL, null when headless. */
  uiUrl: string | null;
  /** Every socket it listens on: gRPC, the HTTP API, metrics, the Web UI. */
  endpoints: { host: string; port: number }[];
  /** SIGTERM, then SIGKILL after a grace period. Safe to call twice. */
  stop(): Promise<void>;
}

const host = '127.0.0.1';
const stopGraceMs = 10_000;

/**
 * How often the dev server's history service may read each of its task queues (Temporal's
 * dynamic config; the server's default is 20 reads a second per history shard, and the dev
 * server has one shard). At 20 a second every new workflow task, activity task and timer
 * waits its turn: after a burst of about a dozen, each run started one after another waited
 * about 35 ms for its first workflow task (a plain one-activity workflow: 13–15 ms with these
 * values, 50 ms without). A production cluster sets its own (README, "Production"). Fairness:
 * task queues dispatch the tasks of each fairness key (a Trellis project) in turn.
 */
export const devServerDynamicConfig = {
  'matching.useNewMatcher': true,
  'matching.enableFairness': true,
  'history.transferProcessorMaxPollRPS': 200,
  'history.timerProcessorMaxPollRPS': 200,
  'history.visibilityProcessorMaxPollRPS': 100,
} as const;

/**
 * Runs the CLI with its stdin as a lifeline: when this process dies, even by SIGKILL, the pipe
 * closes, `cat` returns and the server is terminated, so no orphaned server keeps its ports.
 */
const watchdogScript = [
  'exec 3<&0',
  '"$@" </dev/null &',
  'child=$!',
  // Its own output goes nowhere, so our pipes close as soon as the server and this shell exit.
  '{ cat <&3; kill -TERM "$child"; } >/dev/null 2>&1 &',
  'wait "$child"',
].join('\n');

/** Starts the dev server and resolves once it answers for `namespace`. */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const { logger, namespace } = options;
  // Ports picked here can be taken by someone else before the server binds them; retry then.
  const attempts =
    options.port === undefined || (options.uiPort === undefined && !options.headless) ? 3 : 1;
  if (options.dbFile) await mkdir(path.dirname(options.dbFile), { recursive: true });
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    const uiPort = options.headless ? null : (options.uiPort ?? (await freePort()));
    try {
      return await startOnce(options, port, uiPort);
    } catch (error) {
      if (attempt >= attempts || !(error instanceof DevServerExited)) throw error;
      logger.warn(
        { err: error },
        'Temporal dev server exited during start; retrying on other ports',
      );
    }
  }

  async function startOnce(
    opts: DevServerOptions,
    port: number,
    uiPort: number | null,
  ): Promise<DevServer> {
    // Chosen here rather than left to the CLI, so that they are known (plugins must not reach them).
    const [httpPort, metricsPort] = [await freePort(), await freePort()];
    const args = [
      'server',
      'start-dev',
      '--ip',
      host,
      '--port',
      String(port),
      '--http-port',
      String(httpPort),
      '--metrics-port',
      String(metricsPort),
      '--log-level',
      'warn',
    ];
    for (const [key, value] of Object.entries(devServerDynamicConfig)) {
      args.push('--dynamic-config-value', `${key}=${value}`);
    }
    args.push(...(uiPort === null ? ['--headless'] : ['--ui-port', String(uiPort)]));
    if (opts.dbFile) args.push('--db-filename', opts.dbFile);
    for (const created of new Set([namespace, ...(opts.otherNamespaces ?? [])])) {
      if (created !== 'default') args.push('--namespace', created);
    }
    for (const key of trellisSearchAttributes)
      args.push('--search-attribute', `${key.name}=${searchAttributeTypeName(key)}`);

    const child = spawn(
      '/bin/sh',
      ['-c', watchdogScript, 'temporal-watchdog', opts.cliPath, ...args],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
        // Own process group: a terminal's Ctrl-C reaches only the launcher, which stops the worker
        // before Temporal; stop() signals the whole group.
        detached: true,
      },
    );
    const output = captureTail(child);
    const killOnExit = () => signalGroup(child, 'SIGKILL');
    process.on('exit', killOnExit);
    // 'close' rather than 'exit': by then the last of the server's output has been captured.
    const exited = new Promise<number | null>((resolve) =>
      child.on('close', (code) => resolve(code)),
    );
    void exited.then(() => {
      process.off('exit', killOnExit);
      child.stdin?.destroy();
    });

    const address = `${host}:${port}`;
    const uiUrl = uiPort === null ? null : `http://${host}:${uiPort}`;
    let stopping: Promise<void> | null = null;
    const stop = () =>
      (stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        signalGroup(child, 'SIGTERM');
        const graceful = await Promise.race([
          exited.then(() => true),
          sleep(stopGraceMs, false, { ref: false }),
        ]);
        if (!graceful) {
          logger.warn('Temporal dev server did not stop in time; killing it');
          signalGroup(child, 'SIGKILL');
          await exited;
        }
      })());

    logger.debug({ cli: opts.cliPath, args }, 'starting Temporal dev server');
    try {
      await waitUntilServing(address, namespace, opts.startTimeoutMs ?? 60_000, exited, output);
    } catch (error) {
      await stop();
      throw error;
    }
    logger.info({ address, uiUrl, dbFile: opts.dbFile ?? null }, 'Temporal dev server is up');
    const endpoints = [port, httpPort, metricsPort, ...(uiPort === null ? [] : [uiPort])].map(
      (listening) => ({ host, port: listening }),
    );
    return { address, uiUrl, endpoints, stop };
  }
}

class DevServerExited extends Error {}

async function waitUntilServing(
  address: string,
  namespace: string,
  timeoutMs: number,
  exited: Promise<number | null>,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const died = exited.then((code) => {
    throw new DevServerExited(
      `Temporal dev server exited with code ${code} during start.${tailText(output())}`,
    );
  });
  died.catch(() => undefined); // only ever raced below
  let lastError: unknown;
  while (Date.now() < deadline) {
    const attempt = answers(address, namespace);
    attempt.catch(() => undefined); // may lose the race to `died`
    try {
      await Promise.race([attempt, died]);
      return;
    } catch (error) {
      if (error instanceof DevServerExited) throw error;
      lastError = error;
      await Promise.race([sleep(250), died]);
    }
  }
  throw new Error(
    `Temporal dev server did not answer on ${address} within ${timeoutMs} ms (last error: ${String(
      (lastError as Error | undefined)?.message ?? lastError,
    )}).${tailText(output())}`,
  );
}

/** Resolves when the server accepts a connection and knows `namespace`. */
async function answers(address: string, namespace: string): Promise<void> {
  const connection = await Connection.connect({ address, connectTimeout: 2_000 });
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } finally {
    await connection.close();
  }
}

function tailText(text: string): string {
  return text.trim() ? `\nIts output ended with:\n${text.trim()}` : '';
}

/** Keeps the last few KB of the child's stdout and stderr for error messages. */
function captureTail(child: ChildProcess, limit = 4_000): () => string {
  let tail = '';
  const append = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-limit);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return () => tail;
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
