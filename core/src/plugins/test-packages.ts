import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { PluginManifest } from './contract.js';

/**
 * Writes throwaway plugin package folders for tests: a manifest and an `index.js` whose
 * source is given, exactly what a plugin author would write.
 */
export async function writeTestPackage(
  manifest: Partial<PluginManifest> & Pick<PluginManifest, 'type' | 'version'>,
  source: string,
  parent?: string,
): Promise<string> {
  const root = parent ?? (await mkdtemp(path.join(os.tmpdir(), 'trellis-package-')));
  const dir = path.join(
    root,
    `${manifest.type.replace('/', '-')}-${manifest.version}`.toLowerCase(),
  );
  await mkdir(dir, { recursive: true });
  const full = { description: `Test plugin ${manifest.type}`, specifications: [], ...manifest };
  await writeFile(path.join(dir, 'plugin.json'), `${JSON.stringify(full, null, 2)}\n`);
  await writeFile(path.join(dir, full.main ?? 'index.js'), source);
  return dir;
}
