/**
 * The SDK as a consumer gets it: built and packed by `npm pack` in sdk/ (its `prepack` builds a
 * clean dist/), then installed from the tarball into a scratch project of its own, outside this
 * repository, so that nothing resolves to sdk/src or to the workspace's node_modules. Used by the
 * packed SDK's end-to-end test and by `npm run check:sdk`.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const sdkDirectory = fileURLToPath(new URL('../../sdk/', import.meta.url));
const run = promisify(execFile);

export interface PackedSdk {
  /** The `.tgz` that `npm publish` would upload. */
  tarball: string;
  /** A scratch project holding only the tarball installed (with what it depends on). */
  consumer: string;
  /** `consumer/index.js`: an ES module that re-exports `@trellis/sdk` as the consumer resolves it. */
  esmEntry: string;
  /** `consumer/require.cjs`: a CommonJS module that exports `require('@trellis/sdk')`. */
  cjsEntry: string;
  /** Deletes the scratch folder. */
  remove(): Promise<void>;
}

/** `npm pack` of the package in `directory` (its `prepack` builds it), the tarball put in `destination`. */
export async function packPackage(directory: string, destination: string): Promise<string> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', destination], {
    cwd: directory,
  });
  // npm prints the prepack's output before the JSON report; the report is the last JSON array.
  const report = JSON.parse(stdout.slice(stdout.lastIndexOf('\n[') + 1)) as { filename: string }[];
  const [packed, ...others] = report;
  if (!packed || others.length > 0)
    throw new Error(`npm pack in ${directory} made no single tarball`);
  return path.join(destination, packed.filename);
}

/**
 * Runs `pack` while no other process of this repository packs: packing sdk/ deletes and rebuilds
 * sdk/dist, which a pack running at the same time (another test file, `npm run check:sdk`) reads.
 * The lock is a file holding its owner's pid; one whose owner has died is taken over.
 */
export async function withPackingLock<T>(pack: () => Promise<T>): Promise<T> {
  const id = createHash('sha256').update(sdkDirectory).digest('hex').slice(0, 12);
  const lock = path.join(tmpdir(), `trellis-pack-${id}.lock`);
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      await writeFile(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(await readFile(lock, 'utf8').catch(() => ''));
      // An empty file is one being written: its owner is alive.
      if (owner > 0 && !isRunning(owner)) {
        await rm(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`Waited 5 minutes for ${lock} (pid ${owner})`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    return await pack();
  } finally {
    await rm(lock, { force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Packs sdk/ and installs the tarball into a new scratch project under the system temp folder. */
export async function packSdk(): Promise<PackedSdk> {
  const scratch = await mkdtemp(path.join(tmpdir(), 'trellis-packed-sdk-'));
  const remove = () => rm(scratch, { recursive: true, force: true });
  try {
    const tarball = await withPackingLock(() => packPackage(sdkDirectory, scratch));

    const consumer = path.join(scratch, 'consumer');
    await mkdir(consumer);
    const manifest = { name: 'trellis-sdk-consumer', private: true, type: 'module' };
    await writeFile(path.join(consumer, 'package.json'), JSON.stringify(manifest));
    // `--prefer-offline`: the SDK's dependencies come from npm's cache when CI has them there.
    await run(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--no-package-lock', tarball],
      { cwd: consumer },
    );
    const esmEntry = path.join(consumer, 'index.js');
    await writeFile(esmEntry, "export * from '@trellis/sdk';\n");
    const cjsEntry = path.join(consumer, 'require.cjs');
    await writeFile(cjsEntry, "module.exports = require('@trellis/sdk');\n");
    return { tarball, consumer, esmEntry, cjsEntry, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
