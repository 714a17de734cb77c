/**
 * The CLI as a user installs it: sdk/ and cli/ packed by `npm pack` (each `prepack` builds a clean
 * dist/, the CLI's against the SDK's), and both tarballs installed into a scratch project of its
 * own outside this repository, so that the `trellis` bin runs the compiled JavaScript with the
 * packed SDK, as `npm install -g @trellis/cli` would.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { packPackage, sdkDirectory, withPackingLock } from './packed-sdk.js';

const cliDirectory = fileURLToPath(new URL('../../cli/', import.meta.url));
const run = promisify(execFile);

export interface PackedCli {
  /** A scratch project holding the two tarballs installed. */
  consumer: string;
  /** `consumer/node_modules/.bin/trellis`: the installed command. */
  bin: string;
  /** Deletes the scratch folder. */
  remove(): Promise<void>;
}

/** Packs sdk/ and cli/ and installs both tarballs into a new scratch project. */
export async function packCli(): Promise<PackedCli> {
  const scratch = await mkdtemp(path.join(tmpdir(), 'trellis-packed-cli-'));
  const remove = () => rm(scratch, { recursive: true, force: true });
  try {
    // One lock for both: the CLI compiles against the sdk/dist the SDK's pack has just built.
    const tarballs = await withPackingLock(async () => [
      await packPackage(sdkDirectory, scratch),
      await packPackage(cliDirectory, scratch),
    ]);
    const consumer = path.join(scratch, 'consumer');
    await mkdir(consumer);
    const manifest = { name: 'trellis-cli-consumer', private: true };
    await writeFile(path.join(consumer, 'package.json'), JSON.stringify(manifest));
    await run(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--no-package-lock', ...tarballs],
      { cwd: consumer },
    );
    return { consumer, bin: path.join(consumer, 'node_modules', '.bin', 'trellis'), remove };
  } catch (error) {
    await remove();
    throw error;
  }
}
