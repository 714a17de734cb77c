/**
 * A registry package is checked whole before anything is stored: every entry must be a plain file
 * or folder inside the package, and the package must fit the size limits; only a built-in may
 * ask to run in the worker's process. Anything else is a 400 naming the entry (finding 2 of issue
 * 16), and nothing is installed.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '#plugin-host/package.js';
import type { RegistryEntry } from '#plugin-host/registry.js';
import { rawPackageEntries, rawTarball, type RawTarEntry } from '../support/plugin-packages.js';
import { startTrellis, type Trellis } from '../support/harness.js';
import { expectFailure } from './api-error.js';

let trellis: Trellis;
let registry: string;

/**
 * Each hostile package: the entries it adds to a working package, or the fields it adds to its
 * manifest, and what the 400 says.
 */
const hostile: Record<string, { extra: RawTarEntry[]; manifest?: object; message: RegExp }> = {
  Symlink: {
    extra: [{ path: 'passwd', type: 'SymbolicLink', linkpath: '/etc/passwd' }],
    message: /entry "passwd" is a symbolic link/,
  },
  Hardlink: {
    extra: [{ path: 'hard', type: 'Link', linkpath: '/etc/passwd' }],
    message: /entry "hard" is a hard link/,
  },
  DotDot: {
    extra: [{ path: '../outside', content: 'x' }],
    message: /entry "\.\.\/outside" climbs out of the package/,
  },
  NestedDotDot: {
    extra: [{ path: 'sub/../../outside', content: 'x' }],
    message: /entry "sub\/\.\.\/\.\.\/outside" climbs out of the package/,
  },
  Absolute: {
    extra: [{ path: '/tmp/trellis-absolute-entry', content: 'x' }],
    message: /entry "\/tmp\/trellis-absolute-entry" is an absolute path/,
  },
  Device: {
    extra: [{ path: 'tty', type: 'CharacterDevice' }],
    message: /entry "tty" is a character device/,
  },
  TwoBadEntries: {
    extra: [
      { path: '../first', content: 'x' },
      { path: 'second', type: 'Link', linkpath: '/etc/shadow' },
    ],
    message: /entry "\.\.\/first" climbs out of the package; entry "second" is a hard link/,
  },
  Huge: {
    extra: [{ path: 'noise.bin', content: randomBytes(300 * 1024) }],
    message: /is 300\.\d KiB, over the 256\.0 KiB limit \(Plugins\.MaxPackageBytes\)/,
  },
  InProcess: {
    extra: [],
    manifest: { inProcess: true },
    message: /field "inProcess" is for built-in plugins only/,
  },
  UnknownEffects: {
    extra: [],
    manifest: { effects: 'sometimes' },
    message: /plugin\.json field "effects" must be one of "pure", "reads", "writes", "calls"/,
  },
  FileUnderFile: {
    extra: [
      { path: 'a', content: 'x' },
      { path: 'a/b', content: 'y' },
    ],
    message: /entry "a\/b" is inside "a", which is a file/,
  },
  FolderAndFile: {
    extra: [
      { path: 'lib/', type: 'Directory' },
      { path: 'lib', content: 'x' },
    ],
    message: /entry "lib" appears twice/,
  },
  LongName: {
    extra: [{ path: `${'n'.repeat(300)}.js`, content: 'x' }],
    message: /entry "n{300}\.js" has a name of 303 bytes, over the 255 a file system allows/,
  },
  LongPath: {
    extra: [
      { path: `${Array.from({ length: 25 }, () => 'd'.repeat(200)).join('/')}/f`, content: 'x' },
    ],
    message: /entry "(d{200}\/){25}f" has a path of 5026 bytes, over the 1024 allowed/,
  },
  Bomb: {
    extra: [{ path: 'zeros.bin', content: Buffer.alloc(2 * 1024 * 1024) }],
    message: /unpacks to more than 1\.0 MiB \(Plugins\.MaxUnpackedPackageBytes\)/,
  },
};

beforeAll(async () => {
  registry = await mkdtemp(path.join(tmpdir(), 'trellis-hostile-registry-'));
  await mkdir(registry, { recursive: true });
  const plugins: RegistryEntry[] = [];
  for (const [name, { extra, manifest }] of Object.entries(hostile)) {
    const type = `Hostile/${name}`;
    const entries = rawPackageEntries(type, '1.0.0');
    if (manifest) {
      entries[0]!.content = JSON.stringify({
        type,
        version: '1.0.0',
        description: '',
        ...manifest,
      });
    }
    const bytes = rawTarball([...entries, ...extra]);
    const tarball = `${name.toLowerCase()}.tgz`;
    await writeFile(path.join(registry, tarball), bytes);
    plugins.push({ type, version: '1.0.0', description: name, sha256: sha256Hex(bytes), tarball });
  }
  await writeFile(path.join(registry, 'index.json'), JSON.stringify({ plugins }));
  trellis = await startTrellis({
    config: {
      Plugins: {
        Registry: registry,
        MaxPackageBytes: 256 * 1024,
        MaxUnpackedPackageBytes: 1024 * 1024,
      },
    },
  });
});
afterAll(async () => {
  await trellis?.stop();
  if (registry) await rm(registry, { recursive: true, force: true });
});

/** The stable code of a package's refusal: its shape, or (in its manifest) a field. */
const expectedCode = (name: string) =>
  hostile[name]!.manifest ? 'validation.invalid' : 'plugin.package_invalid';

describe('installing a hostile package', () => {
  for (const [name, { message }] of Object.entries(hostile)) {
    it(`refuses ${name} with 400 naming the problem, and stores nothing`, async () => {
      const type = `Hostile/${name}`;
      const error = await expectFailure(
        trellis.admin.POST('/plugins', { body: { Type: type, Version: '1.0.0' } }),
        400,
        message,
      );
      expect(error.errors.map((detail) => detail.code)).toContain(expectedCode(name));
      // Nothing a user sees says where the server keeps the registry.
      expect(JSON.stringify(error.body)).not.toContain(registry);
      const installed = await trellis.admin.GET('/plugins');
      expect(installed.map((plugin) => plugin.type)).not.toContain(type);
    });
  }
});
