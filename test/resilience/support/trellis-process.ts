/**
 * Trellis as an operator runs it: `bin/trellis.ts --role api|worker|all` as a process of its
 * own, configured by a `TRELLIS_CONFIG` file, so that a test (or the benchmarks) can SIGKILL it
 * and start another. Node runs the launcher directly (`node --import tsx`), not through the `tsx`
 * wrapper, so a signal reaches the process that holds the sockets.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { DeepPartial } from '#platform/config/load.js';
import type { TrellisConfig } from '#platform/config/types.js';

export const projectRoot = fileURLToPath(new URL('../../../', import.meta.url));

export type TrellisRole = 'api' | 'worker' | 'all';

export interface TrellisProcessOptions {
  role: TrellisRole;
  /** The `TRELLIS_CONFIG` file (see `writeTrellisConfig`). */
  configFile?: string;
  /** Environment on top of the caller's (whose TRELLIS variables are dropped): `TRELLIS__...` configuration, as a container gets it. */
  env?: Record<string, string>;
  /** Working directory (default the checkout; `--import tsx` resolves from it, compiled runs need not). */
  cwd?: string;
  /** Node flags before the script, e.g. `--cpu-prof`. */
  nodeArgs?: string[];
  /** How long to wait for the launcher's banner (default 90 s: the worker bundles its workflows). */
  startTimeoutMs?: number;
  /** Run the compiled launcher (`dist/`, built beforehand by `npm run build`) rather than source. */
  compiled?: boolean;
  /** A compiled launcher elsewhere, e.g. in a copy of the container image's files. */
  launcher?: string;
}

export interface TrellisProcess {
  role: TrellisRole;
  pid: number;
  /** The API's URL (api and all roles), as the banner printed it. */
  url: string | null;
  /** The last few KB the process wrote (stdout and stderr), for failure messages. */
  output(): string;
  /** Resolves when the process has exited and its output is read. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL: the process dies at once, wherever it was. */
  kill(): Promise<void>;
  /** SIGTERM: the launcher stops in order (and Node writes a `--cpu-prof` profile). */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Writes a configuration file for `spawnTrellis`. */
export async function writeTrellisConfig(
  file: string,
  config: DeepPartial<TrellisConfig>,
): Promise<string> {
  await writeFile(file, JSON.stringify(config, null, 2));
  return file;
}

/** Starts the launcher in `role`; resolves once its banner says it is running. */
export async function spawnTrellis(options: TrellisProcessOptions): Promise<TrellisProcess> {
  // Only the file and `env` configure it: no TRELLIS__ overrides leak in from the caller's environment.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('TRELLIS')),
  );
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      ...(options.launcher
        ? [options.launcher]
        : options.compiled
          ? [path.join(projectRoot, 'dist/bin/trellis.js')]
          : ['--import', 'tsx', path.join(projectRoot, 'bin/trellis.ts')]),
      '--role',
      options.role,
    ],
    {
      cwd: options.cwd ?? projectRoot,
      env: {
        ...env,
        ...options.env,
        ...(options.configFile ? { TRELLIS_CONFIG: options.configFile } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  if (child.pid === undefined) throw new Error(`Could not start trellis --role ${options.role}`);
  live.add(child);
  let tail = '';
  const append = (text: string) => {
    tail = (tail + text).slice(-8_000);
  };
  child.stderr.on('data', (chunk: Buffer) => append(chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );

  let url: string | null = null;
  const ready = new Promise<void>((resolve, reject) => {
    const timeout = options.startTimeoutMs ?? 90_000;
    const timer = setTimeout(
      () => reject(new Error(`trellis --role ${options.role} did not start in ${timeout} ms`)),
      timeout,
    );
    createInterface({ input: child.stdout }).on('line', (line) => {
      append(`${line}\n`);
      const api = /^\s+API\s+(http\S+)/.exec(line);
      if (api?.[1]) url = api[1];
      if (line.startsWith('Press Ctrl-C to stop.')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`trellis --role ${options.role} exited (${code ?? signal}) while starting`));
    });
  });
  try {
    await ready;
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`${(error as Error).message}; its output ended with:\n${tail}`);
  }

  const signalAndWait = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    role: options.role,
    pid: child.pid,
    url,
    output: () => tail,
    exited,
    kill: () => signalAndWait('SIGKILL'),
    stop: () => signalAndWait('SIGTERM'),
  };
}
