/**
 * The SDK as a consumer gets it: built and packed by `npm pack` in sdk/ (its `prepack` builds a
 * clean dist/), then installed from the tarball into a scratch project of its own, outside this
 * repository, so that nothing resolves to sdk/src or to the workspace's node_modules. Used by the
 * packed SDK's end-to-end test and by `npm run check:sdk`.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const sdkDirectory = fileURLToPath(new URL('../../sdk/', import.meta.url));
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

/** Packs sdk/ and installs the tarball into a new scratch project under the system temp folder. */
export async function packSdk(): Promise<PackedSdk> {
  const scratch = await mkdtemp(path.join(tmpdir(), 'trellis-packed-sdk-'));
  const remove = () => rm(scratch, { recursive: true, force: true });
  try {
    await run('npm', ['pack', '--pack-destination', scratch], { cwd: sdkDirectory });
    const [tarballName, ...others] = (await readdir(scratch)).filter((f) => f.endsWith('.tgz'));
    if (!tarballName || others.length > 0) throw new Error(`npm pack made no single tarball`);
    const tarball = path.join(scratch, tarballName);

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
