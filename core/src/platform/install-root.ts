/**
 * The folder Trellis is installed in (its package.json, `plugins/`, `generated/`, `.tools/`),
 * found from this module's own location. The same code runs from source (`core/src/…`) and
 * compiled (`dist/core/src/…`), at different depths, so the root is the nearest ancestor holding
 * Trellis's package.json rather than a fixed number of `..`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findInstallRoot(start: string): string {
  for (let folder = start; ; folder = path.dirname(folder)) {
    const manifest = path.join(folder, 'package.json');
    if (existsSync(manifest) && isTrellisManifest(manifest)) return folder;
    if (path.dirname(folder) === folder) {
      throw new Error(`Trellis's package.json was not found above ${start}`);
    }
  }
}

function isTrellisManifest(file: string): boolean {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === 'trellis';
  } catch {
    return false;
  }
}

export const installRoot = findInstallRoot(path.dirname(fileURLToPath(import.meta.url)));

/** A path inside the install root. */
export function installPath(...segments: string[]): string {
  return path.join(installRoot, ...segments);
}

/** The version of the installed Trellis (its package.json). */
export const trellisVersion = (
  JSON.parse(readFileSync(installPath('package.json'), 'utf8')) as { version: string }
).version;
