/**
 * Trellis workers as processes of their own (`trellis --role worker`), beside a harness started
 * without one, for tests that stop or kill a worker mid-run and start another: the durability
 * tests and the console's interrupted attempt.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Trellis } from './harness.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface WorkerProcesses {
  /** Starts a worker; resolves once it polls. */
  spawn(): Promise<ChildProcess>;
  /** Kills every worker started before (they may hold a run's tasks), then starts one. */
  spawnOnly(): Promise<ChildProcess>;
  /** The workers running now. */
  readonly running: ReadonlySet<ChildProcess>;
  /** Kills them all and deletes their configuration. */
  stop(): Promise<void>;
}

/** Workers on the same database, Temporal and task queue as `trellis`'s API. */
export async function workerProcesses(trellis: Trellis): Promise<WorkerProcesses> {
  const directory = await mkdtemp(path.join(tmpdir(), 'trellis-workers-'));
  const configFile = path.join(directory, 'trellis.config.json');
  // Logs on stdout for the readiness line; each worker's probes on a port of its own.
  await writeFile(
    configFile,
    JSON.stringify({
      ...trellis.config,
      Logging: { Level: 'info' },
      Server: { ...trellis.config.Server, Port: 0 },
      Metrics: { ...trellis.config.Metrics, WorkerPort: 0 },
    }),
  );
  const running = new Set<ChildProcess>();

  async function spawnWorker(): Promise<ChildProcess> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bin/trellis.ts', '--role', 'worker'],
      {
        cwd: root,
        env: { ...process.env, TRELLIS_CONFIG: configFile },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    running.add(child);
    child.once('exit', () => running.delete(child));
    let output = '';
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`worker did not start:\n${output}`)), 60_000);
      createInterface({ input: child.stdout }).on('line', (line) => {
        output += `${line}\n`;
        if (line.includes('worker polling')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`worker exited with ${code}:\n${output}`));
      });
    });
    return child;
  }

  async function killAll(): Promise<void> {
    await Promise.all(
      [...running].map((worker) => {
        const exited = new Promise((resolve) => worker.once('exit', resolve));
        worker.kill('SIGKILL');
        return exited;
      }),
    );
  }

  return {
    spawn: spawnWorker,
    spawnOnly: async () => {
      await killAll();
      return spawnWorker();
    },
    running,
    stop: async () => {
      await killAll();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
