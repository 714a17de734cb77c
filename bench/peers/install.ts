/**
 * The peers' packages, pinned, installed on first use into `.tools/peers/<name>` (never into the
 * repository's package.json or lock): npm's for Restate and DBOS, a Python virtual environment
 * for Prefect. A folder whose install finished holds a stamp naming what it holds, so a later run
 * reuses it and a changed pin installs afresh.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '#platform/logging.js';
import { projectRoot } from '../../test/resilience/support/trellis-process.js';

export const peerPackages = {
  restate: { npm: ['@restatedev/restate-server@1.7.12', '@restatedev/restate-sdk@1.17.2'] },
  dbos: { npm: ['@dbos-inc/dbos-sdk@5.3.0'] },
  prefect: { pip: ['prefect==3.9.1'] },
} satisfies Record<string, { npm: string[] } | { pip: string[] }>;

export type PeerName = keyof typeof peerPackages;

/** The folder a peer's packages are in, installing them first when they are not. */
export async function installPeer(name: PeerName, logger: Logger): Promise<string> {
  const folder = path.join(projectRoot, '.tools/peers', name);
  const wanted = peerPackages[name];
  const stamp = path.join(folder, 'installed.json');
  const installed = await readFile(stamp, 'utf8').catch(() => '');
  if (installed === JSON.stringify(wanted)) return folder;

  logger.info({ peer: name, packages: wanted }, 'installing a peer (once)');
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  if ('npm' in wanted) {
    // npm 11 runs no install scripts of dependencies it was not told to trust: the Restate
    // server's binary comes as an optional dependency per platform, not from a script, and the
    // one script it would run (@scarf/scarf's download counter) is better not run.
    await run('npm', ['install', '--prefix', folder, '--no-audit', '--no-fund', ...wanted.npm]);
  } else {
    const python = process.env.PYTHON ?? 'python3';
    await run(python, ['-m', 'venv', folder]);
    await run(path.join(folder, 'bin/pip'), ['install', '--progress-bar', 'off', ...wanted.pip]);
  }
  await writeFile(stamp, JSON.stringify(wanted));
  logger.info({ peer: name, folder }, 'peer installed');
  return folder;
}

/** The Restate server's binary, from the package for this platform. */
export function restateServerBinary(folder: string): string {
  const binary = path.join(
    folder,
    `node_modules/@restatedev/restate-server-${process.platform}-${process.arch === 'x64' ? 'x64' : 'arm64'}/bin/restate-server`,
  );
  if (!existsSync(binary)) {
    throw new Error(
      `No Restate server binary for ${process.platform}-${process.arch} at ${binary}`,
    );
  }
  return binary;
}

/** Runs an installer, its output shown as it goes (installs take a while: show progress). */
function run(command: string, argv: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, {
      cwd: projectRoot,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${argv.join(' ')} exited ${code}`)),
    );
  });
}
