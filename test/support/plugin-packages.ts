import { gzipSync } from 'node:zlib';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Header, Pax } from 'tar';
import type { PluginManifest } from '#plugin-host/contract.js';

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

/** One entry of a hand-made tarball: any path and type, as a hostile package could hold. */
export interface RawTarEntry {
  path: string;
  type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'CharacterDevice' | 'FIFO';
  content?: string | Buffer;
  linkpath?: string;
}

/**
 * A gzip'd tarball holding exactly the given entries, none of them checked: what `packFolder`
 * would never write (links, `..`, absolute paths), to see what Trellis does with it.
 */
export function rawTarball(entries: RawTarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const content = Buffer.from(entry.content ?? '');
    const header = new Header({
      path: entry.path,
      type: entry.type ?? 'File',
      size: content.length,
      mode: entry.type === 'Directory' ? 0o755 : 0o644,
      mtime: new Date('2000-01-01T00:00:00Z'),
      uid: 0,
      gid: 0,
      ...(entry.linkpath !== undefined ? { linkpath: entry.linkpath } : {}),
    });
    const block = Buffer.alloc(512);
    header.encode(block, 0);
    // A path too long for the header goes in a PAX extended header before it, as tar writes it.
    if (header.needPax) blocks.push(new Pax({ path: entry.path }).encode());
    blocks.push(block, content, Buffer.alloc((512 - (content.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

/** The entries of a working package (`plugin.json`, `index.js` returning `{ ok: true }`). */
export function rawPackageEntries(type: string, version: string): RawTarEntry[] {
  return [
    {
      path: 'plugin.json',
      content: JSON.stringify({ type, version, description: `Test plugin ${type}` }),
    },
    { path: 'index.js', content: 'export async function execute() { return { ok: true }; }\n' },
  ];
}
