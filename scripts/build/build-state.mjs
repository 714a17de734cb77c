// Whether dist/ holds a build of the current sources: the newest modification time among the
// files the build reads, recorded when a build completes.
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const stampFile = path.join(root, 'dist', '.build-stamp');
const inputs = [
  'core/src',
  'server/src',
  'workflows-worker/src',
  'bin',
  'generated',
  'scripts/dev/hash-password.ts',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
];

async function newestIn(entry) {
  const info = await stat(entry).catch(() => null);
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = 0;
  for (const child of await readdir(entry)) {
    newest = Math.max(newest, await newestIn(path.join(entry, child)));
  }
  return newest;
}

/** The stamp of `files` (paths from the repository's root, folders walked) as they are now. */
export async function stampOf(files) {
  let newest = 0;
  for (const input of files) newest = Math.max(newest, await newestIn(path.join(root, input)));
  return String(newest);
}

/** The stamp a build of the sources as they are now records. */
export async function buildStamp() {
  return stampOf(inputs);
}

export async function writeBuildStamp(stamp) {
  await writeFile(stampFile, stamp);
}

/** True when dist/ was built from the sources as they are now. */
export async function isBuildCurrent() {
  const recorded = await readFile(stampFile, 'utf8').catch(() => null);
  return recorded !== null && recorded === (await buildStamp());
}
