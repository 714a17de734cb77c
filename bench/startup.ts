/**
 * Start-up, as operators meet it:
 * - `startup_first_request_ms`: `npm start` (the compiled build, its data directory already made
 *   by an earlier start: embedded PostgreSQL and Temporal dev server, one process) until its
 *   first answered request (`GET /livez`), p50 over the rounds; `startup_ready_s`: until
 *   `/readyz` answers 200 (database and Temporal reachable, worker polling);
 * - `startup_worker_poll_ms`: `trellis --role worker` (compiled) against the benchmark's
 *   PostgreSQL and Temporal until it logs that it polls, p50 over the rounds; it must not bundle
 *   workflow code (the build did), which the log would say.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from '#platform/temporal/dev-server.js';
import type { BenchEnvironment } from './environment.js';
import type { Plan } from './plan.js';
import type { BenchOutcome } from './report.js';
import { percentile, round } from './stats.js';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));

export async function benchmarkStartup(
  env: BenchEnvironment,
  plan: Plan['startup'],
): Promise<BenchOutcome> {
  const dataDirectory = await mkdtemp(path.join(tmpdir(), 'trellis-bench-start-'));
  try {
    // The first start makes the data directory (database cluster, admin login): not measured.
    const firstStart = await startAll(dataDirectory);
    const starts = [];
    for (let round = 0; round < plan.rounds; round++) starts.push(await startAll(dataDirectory));
    const polls = [];
    for (let round = 0; round < plan.rounds; round++) polls.push(await startWorker(env));

    const answered = percentile(
      starts.map((start) => start.answeredMs),
      50,
    );
    const ready = percentile(
      starts.map((start) => start.readyMs),
      50,
    );
    const poll = percentile(
      polls.map((start) => start.pollingMs),
      50,
    );
    return {
      results: {
        startup_first_request_ms: round(answered, 0),
        startup_worker_poll_ms: round(poll, 0),
        startup_ready_s: round(ready / 1000, 2),
      },
      rows: [
        {
          metric: 'npm start (data directory present) to first answered request, p50 ms',
          ours: `${round(answered, 0)} (ready ${round(ready, 0)}; first start ever ${round(firstStart.answeredMs, 0)})`,
          baseline: '',
          ratio: '',
          target: 'reported',
        },
        {
          metric: 'worker start to first poll, p50 ms',
          ours: `${round(poll, 0)} (no workflow bundling)`,
          baseline: '',
          ratio: '',
          target: 'reported',
        },
      ],
      details: { rounds: plan.rounds, firstStart, starts, polls },
    };
  } finally {
    await rm(dataDirectory, { recursive: true, force: true });
  }
}

/**
 * `npm start` as the README runs it (`node scripts/build/run-built.mjs bin/trellis.js`), on a port of
 * its own over `dataDirectory`; the milliseconds until `/livez` and then `/readyz` answer 200.
 */
async function startAll(dataDirectory: string) {
  const port = await freePort();
  const began = performance.now();
  const child = spawn(process.execPath, ['scripts/build/run-built.mjs', 'bin/trellis.js'], {
    cwd: projectRoot,
    env: {
      ...withoutTrellisSettings(process.env),
      TRELLIS__DataDirectory: dataDirectory,
      TRELLIS__Server__Port: String(port),
      TRELLIS__Logging__Level: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = captured(child);
  try {
    const base = `http://127.0.0.1:${port}`;
    const answeredMs = (await untilOk(`${base}/livez`, child, output)) - began;
    const readyMs = (await untilOk(`${base}/readyz`, child, output)) - began;
    return { answeredMs: round(answeredMs, 0), readyMs: round(readyMs, 0) };
  } finally {
    await stopProcess(child);
  }
}

/** `trellis --role worker` (compiled) on the benchmark's configuration, until it polls. */
async function startWorker(env: BenchEnvironment) {
  const began = performance.now();
  const child = spawn(
    process.execPath,
    [path.join(projectRoot, 'dist/bin/trellis.js'), '--role', 'worker'],
    {
      cwd: projectRoot,
      env: {
        ...withoutTrellisSettings(process.env),
        TRELLIS_CONFIG: path.join(env.workDirectory, 'trellis.config.json'),
        TRELLIS__Logging__Level: 'info',
        // Its probes on a port of their own, beside the benchmark's worker.
        TRELLIS__Metrics__WorkerPort: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output = captured(child);
  try {
    const pollingMs = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`The worker did not poll:\n${output()}`)),
        60_000,
      );
      const lines = createInterface({ input: child.stdout });
      lines.on('line', (line) => {
        if (line.includes('Workflow bundle created')) {
          clearTimeout(timer);
          reject(new Error('The compiled worker bundled workflow code at start'));
        }
        if (line.includes('"worker polling"')) {
          clearTimeout(timer);
          resolve(performance.now() - began);
        }
      });
      child.once('exit', () => {
        clearTimeout(timer);
        reject(new Error(`The worker exited while starting:\n${output()}`));
      });
    });
    return { pollingMs: round(pollingMs, 0) };
  } finally {
    await stopProcess(child);
  }
}

/** The caller's environment without Trellis settings, as a fresh shell has it. */
function withoutTrellisSettings(environment: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(environment).filter(([key]) => !key.startsWith('TRELLIS')),
  );
}

/** The last few KB the process wrote to stderr, for failure messages. */
function captured(child: ChildProcess): () => string {
  let tail = '';
  child.stderr!.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-4000)));
  return () => tail;
}

/** Polls `url` every 10 ms until it answers 200; the time it did (performance.now()). */
async function untilOk(url: string, child: ChildProcess, output: () => string): Promise<number> {
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`Trellis exited while starting:\n${output()}`);
    const ok = await fetch(url).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ok) return performance.now();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${url} did not answer 200 within 120 s:\n${output()}`);
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
