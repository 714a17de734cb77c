import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { installPath } from '#platform/install-root.js';
import type { SandboxProfile, SandboxSettings } from './sandbox-settings.js';

/**
 * Starting a sandbox process: its command line (heap limit and, for a third-party package, Node's
 * permission model), its environment and its working directory.
 */

/** The module every sandbox process runs. */
const childScript = installPath('core', 'src', 'plugin-host', 'sandbox', 'child.js');
/** Node 22.13+ and 23.5+ name the permission model `--permission`; Node 20 only knows the old flag. */
const permissionFlag = process.allowedNodeEnvironmentFlags.has('--permission')
  ? '--permission'
  : '--experimental-permission';

export interface SpawnOptions {
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** The command line, environment and directory a process for `job`'s package starts with. */
export async function spawnOptions(
  job: { profile: SandboxProfile; directory: string },
  settings: SandboxSettings,
): Promise<SpawnOptions> {
  const heap = [`--max-old-space-size=${settings.memoryMb}`];
  if (job.profile === 'builtin') {
    // Trusted code evaluating untrusted input: limits, and what it reached in process. Not the
    // worker's NODE_OPTIONS, though: an --inspect or a loader there is the worker's, not its own.
    const { NODE_OPTIONS: _, ...env } = process.env;
    return { args: [...heap, childScript], env, cwd: process.cwd() };
  }
  // What a third-party plugin is given must exist before the sandbox starts: it may not create it.
  await mkdir(settings.storageRoot, { recursive: true });
  const cache = path.dirname(job.directory);
  const readable = await withRealPaths([
    childScript,
    job.directory,
    // Bare imports resolve through the cache's link to the host's packages.
    path.join(cache, 'node_modules'),
    installPath('node_modules'),
    settings.storageRoot,
  ]);
  return {
    args: [
      ...heap,
      permissionFlag,
      '--disable-warning=ExperimentalWarning',
      ...readable.map((folder) => `--allow-fs-read=${folder}`),
      ...(await withRealPaths([settings.storageRoot])).map((f) => `--allow-fs-write=${f}`),
      // The watchdog thread (child.js); plugin code cannot start threads.
      '--allow-worker',
      ...(settings.allowProcessExecution ? ['--allow-child-process'] : []),
      childScript,
      'third-party',
    ],
    env: settings.allowProcessExecution && process.env.PATH ? { PATH: process.env.PATH } : {},
    cwd: job.directory,
  };
}

/** The paths and, where they differ, where their links lead (the permission model checks both). */
async function withRealPaths(paths: string[]): Promise<string[]> {
  const real = await Promise.all(paths.map((item) => realpath(item).catch(() => item)));
  return [...new Set([...paths, ...real])];
}

/** Starts a sandbox process; its stdin, stderr and message channel (fd 3) are piped. */
export function spawnSandbox(options: SpawnOptions): ChildProcess {
  return spawn(process.execPath, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['pipe', 'ignore', 'pipe', 'pipe'],
  });
}
