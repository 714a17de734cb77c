import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, readdir, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Invalid } from '#definition/errors.js';
import { builtInPluginsDirectory } from './catalog.js';
import {
  packFolder,
  packageFiles,
  parseManifest,
  readPackage,
  readPackageFolder,
  sha256Hex,
  unpackPackage,
} from './package.js';
import {
  rawPackageEntries,
  rawTarball,
  writeTestPackage,
} from '../../../test/support/plugin-packages.js';

const valid = { type: 'Acme/Echo', version: '1.2.3', description: 'Echoes' };
const limits = { maxPackageBytes: 1024 * 1024, maxUnpackedBytes: 4 * 1024 * 1024 };

function problemsOf(manifest: unknown): string[] {
  try {
    parseManifest(manifest, 'acme-echo');
  } catch (error) {
    expect(error).toBeInstanceOf(Invalid);
    return (error as Invalid).messages;
  }
  return [];
}

describe('parseManifest', () => {
  it('fills defaults for specifications', () => {
    const manifest = parseManifest(
      { ...valid, specifications: [{ key: 'token', type: 'string', secret: true }] },
      'x',
    );
    expect(manifest.specifications).toEqual([
      { key: 'token', type: 'string', required: false, secret: true, description: '' },
    ]);
  });

  it('reads `quick`, absent meaning a regular plugin, and refuses a non-boolean', () => {
    expect(parseManifest({ ...valid, quick: true }, 'x').quick).toBe(true);
    expect(parseManifest({ ...valid, quick: false }, 'x').quick).toBe(false);
    expect(parseManifest(valid, 'x').quick).toBeUndefined();
    expect(problemsOf({ ...valid, quick: 'yes' })).toEqual([
      'Plugin package acme-echo: plugin.json field "quick" must be boolean',
    ]);
  });

  it('marks the built-ins that only compute quick, and those that wait or do I/O not', async () => {
    const quick = new Map(
      await Promise.all(
        (await readdir(builtInPluginsDirectory(), { withFileTypes: true }))
          .filter((entry) => entry.isDirectory())
          .map(async (entry) => {
            const manifest = await readPackageFolder(
              path.join(builtInPluginsDirectory(), entry.name),
            );
            return [manifest.type, manifest.quick === true] as const;
          }),
      ),
    );
    expect(Object.fromEntries(quick)).toEqual({
      'Data/Base64': true,
      'Data/Csv': true,
      'Data/Json': true,
      'Database/PostgreSql': false,
      'Exec/Process': false,
      'Flow/Delay': false,
      'Flow/Log': true,
      'Flow/NoOp': true,
      'Net/Http': false,
      'Security/Hash': true,
      'Storage/Local': false,
    });
  });

  it('runs in process only the built-ins whose work is trivially bounded', async () => {
    const folders = (await readdir(builtInPluginsDirectory(), { withFileTypes: true })).filter(
      (entry) => entry.isDirectory(),
    );
    const inProcess: string[] = [];
    for (const folder of folders) {
      const manifest = await readPackageFolder(path.join(builtInPluginsDirectory(), folder.name));
      if (manifest.inProcess === true) inProcess.push(manifest.type);
    }
    // Not Data/Json, Data/Csv (user expressions, input of any shape), nor Net/Http, Storage/Local
    // and Database/PostgreSql (responses, files and rows of any size): they run in a sandbox.
    expect(inProcess.sort()).toEqual([
      'Data/Base64',
      'Exec/Process',
      'Flow/Delay',
      'Flow/Log',
      'Flow/NoOp',
      'Security/Hash',
    ]);
  });

  it('reads `effects`, absent meaning `calls`, and refuses a value it does not know, naming those it does', () => {
    expect(parseManifest({ ...valid, effects: 'pure' }, 'x').effects).toBe('pure');
    expect(parseManifest(valid, 'x').effects).toBe('calls');
    expect(problemsOf({ ...valid, effects: 'none' })).toEqual([
      'Plugin package acme-echo: plugin.json field "effects" must be one of "pure", "reads", "writes", "calls"',
    ]);
    expect(problemsOf({ ...valid, effects: ['reads'] })).toHaveLength(1);
  });

  it('declares what each built-in does: only those computing from their parameters are pure', async () => {
    const folders = (await readdir(builtInPluginsDirectory(), { withFileTypes: true })).filter(
      (entry) => entry.isDirectory(),
    );
    const effects: Record<string, unknown> = {};
    for (const folder of folders) {
      const file = path.join(builtInPluginsDirectory(), folder.name, 'plugin.json');
      const declared = JSON.parse(await readFile(file, 'utf8')) as { type: string };
      // Declared in the manifest itself, not left to the default.
      effects[declared.type] = (declared as { effects?: unknown }).effects;
    }
    expect(effects).toEqual({
      'Data/Base64': 'pure',
      'Data/Csv': 'pure',
      'Data/Json': 'pure',
      'Database/PostgreSql': 'writes',
      'Exec/Process': 'calls',
      'Flow/Delay': 'pure',
      'Flow/Log': 'pure',
      'Flow/NoOp': 'pure',
      'Net/Http': 'calls',
      'Security/Hash': 'pure',
      'Storage/Local': 'writes',
    });
  });

  it('names every problem, each with the package', () => {
    expect(problemsOf({ type: 'Echo', version: 'one', description: 'd' })).toEqual([
      'Plugin package acme-echo: plugin.json field "type" must be shaped <Group>/<Name>, got "Echo"',
      'Plugin package acme-echo: plugin.json field "version" must be a semver version, got "one"',
    ]);
    expect(problemsOf({ type: 'A/B' })).toEqual([
      'Plugin package acme-echo: plugin.json field "version" is required',
      'Plugin package acme-echo: plugin.json field "description" is required',
    ]);
  });

  it('checks specification descriptors and the parameters and output schemas', () => {
    expect(
      problemsOf({
        ...valid,
        specifications: [
          { key: 'a', type: 'number', default: 'ten' },
          { key: 'a', type: 'string' },
          { key: 'b', type: 'date' },
        ],
      }),
    ).toEqual([
      'Plugin package acme-echo: plugin.json field "specifications.2.type" must be one of "string", "number", "integer", "boolean", "object", "array"',
    ]);
    expect(
      problemsOf({
        ...valid,
        specifications: [
          { key: 'a', type: 'number', default: 'ten' },
          { key: 'a', type: 'string' },
        ],
      }),
    ).toEqual([
      'Plugin package acme-echo: plugin.json specification "a" has a default that is not a number',
      'Plugin package acme-echo: plugin.json specification "a" is declared twice',
    ]);
    expect(problemsOf({ ...valid, parameters: { type: 'nonsense' } })[0]).toMatch(
      /field "parameters" is not a valid JSON Schema/,
    );
    expect(problemsOf({ ...valid, output: { type: 'nonsense' } })[0]).toMatch(
      /field "output" is not a valid JSON Schema/,
    );
    expect(problemsOf({ ...valid, output: 'anything' })).toEqual([
      'Plugin package acme-echo: plugin.json field "output" must be object',
    ]);
    expect(problemsOf({ ...valid, main: '../outside.js' })).toEqual([
      'Plugin package acme-echo: plugin.json field "main" must be a path inside the package, got "../outside.js"',
    ]);
  });
});

describe('packing', () => {
  it('gives the same bytes for the same content, whatever the file times and modes', async () => {
    const dir = await writeTestPackage(valid, 'export const execute = (p) => p;\n');
    await mkdir(path.join(dir, 'lib'));
    await writeFile(path.join(dir, 'lib', 'helper.js'), 'export const x = 1;\n');
    const first = await packFolder(dir);
    await utimes(path.join(dir, 'index.js'), new Date('2030-01-01'), new Date('2030-01-01'));
    await chmod(path.join(dir, 'lib', 'helper.js'), 0o600);
    const second = await packFolder(dir);
    expect(sha256Hex(second)).toBe(sha256Hex(first));
    await writeFile(path.join(dir, 'lib', 'helper.js'), 'export const x = 2;\n');
    expect(sha256Hex(await packFolder(dir))).not.toBe(sha256Hex(first));
  });

  it('leaves out tests, dotfiles and node_modules, in a stable order', async () => {
    const dir = await writeTestPackage(valid, 'export const execute = () => 1;\n');
    await mkdir(path.join(dir, 'node_modules', 'dep'), { recursive: true });
    await writeFile(path.join(dir, 'node_modules', 'dep', 'index.js'), '');
    await writeFile(path.join(dir, '.env'), 'SECRET=1');
    await writeFile(path.join(dir, 'index.test.ts'), '');
    await writeFile(path.join(dir, 'README.md'), '# Echo');
    expect(await packageFiles(dir)).toEqual(['README.md', 'index.js', 'plugin.json']);
  });

  it('refuses a folder without a manifest or entry module', async () => {
    const empty = await mkdtemp(path.join(os.tmpdir(), 'trellis-empty-'));
    await expect(packFolder(empty)).rejects.toThrow(/plugin.json is missing/);
    await writeFile(path.join(empty, 'plugin.json'), JSON.stringify(valid));
    await expect(packFolder(empty)).rejects.toThrow(/entry module index.js is missing/);
  });

  it('reads the manifest from a tarball and unpacks it by content address', async () => {
    const dir = await writeTestPackage(valid, 'export const execute = () => 1;\n');
    const bytes = await packFolder(dir);
    const sha256 = sha256Hex(bytes);
    expect((await readPackage(bytes, 'echo.tgz', limits)).manifest).toMatchObject(valid);
    const cache = await mkdtemp(path.join(os.tmpdir(), 'trellis-cache-'));
    const unpacked = await unpackPackage(bytes, sha256, cache, limits);
    expect(unpacked).toBe(path.join(cache, sha256));
    expect(await readFile(path.join(unpacked, 'index.js'), 'utf8')).toBe(
      'export const execute = () => 1;\n',
    );
    // A second unpack (another worker) finds it in place and leaves no staging folders.
    expect(await unpackPackage(bytes, sha256, cache, limits)).toBe(unpacked);
    expect(await readdir(cache)).toEqual([sha256]);
  });

  it('refuses bytes that do not match their content address, and non-tarballs', async () => {
    const dir = await writeTestPackage(valid, 'export const execute = () => 1;\n');
    const bytes = await packFolder(dir);
    const cache = await mkdtemp(path.join(os.tmpdir(), 'trellis-cache-'));
    await expect(unpackPackage(bytes, 'a'.repeat(64), cache, limits)).rejects.toThrow(
      /checksum mismatch/,
    );
    await expect(readPackage(Buffer.from('not a tarball'), 'bad.tgz', limits)).rejects.toThrow(
      /bad.tgz/,
    );
  });
});

describe('checking a package before it is stored or unpacked', () => {
  const entries = rawPackageEntries('Acme/Echo', '1.2.3');
  const problemOf = async (bytes: Buffer) => {
    const error = await readPackage(bytes, 'echo.tgz', limits).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(Invalid);
    return (error as Invalid).messages.join('\n');
  };

  it('refuses links, devices, absolute paths and paths that climb out, naming every entry', async () => {
    expect(
      await problemOf(
        rawTarball([
          ...entries,
          { path: 'passwd', type: 'SymbolicLink', linkpath: '/etc/passwd' },
          { path: 'hard', type: 'Link', linkpath: '/etc/passwd' },
          { path: 'tty', type: 'CharacterDevice' },
          { path: 'pipe', type: 'FIFO' },
          { path: '/etc/cron.d/x', content: 'x' },
          { path: '../x', content: 'x' },
          { path: 'sub/../../x', content: 'x' },
          { path: './ok/../fine.txt', content: 'x' },
        ]),
      ),
    ).toBe(
      'Plugin package echo.tgz entry "passwd" is a symbolic link; entry "hard" is a hard link; ' +
        'entry "tty" is a character device; entry "pipe" is a FIFO; ' +
        'entry "/etc/cron.d/x" is an absolute path; entry "../x" climbs out of the package; ' +
        'entry "sub/../../x" climbs out of the package; entry "./ok/../fine.txt" climbs out of the package',
    );
  });

  it('refuses a package over the size limits, packed or unpacked', async () => {
    expect(
      await problemOf(
        rawTarball([...entries, { path: 'n', content: randomBytes(1.5 * 1024 * 1024) }]),
      ),
    ).toMatch(
      /^Plugin package echo.tgz is 1\.5 MiB, over the 1\.0 MiB limit \(Plugins\.MaxPackageBytes\)$/,
    );
    expect(
      await problemOf(
        rawTarball([...entries, { path: 'z', content: Buffer.alloc(5 * 1024 * 1024) }]),
      ),
    ).toBe(
      'Plugin package echo.tgz unpacks to more than 4.0 MiB (Plugins.MaxUnpackedPackageBytes)',
    );
  });

  it('refuses a package without a manifest or entry module, and a damaged tarball', async () => {
    expect(await problemOf(rawTarball([entries[1]!]))).toBe(
      'Plugin package echo.tgz has no plugin.json',
    );
    expect(await problemOf(rawTarball([entries[0]!]))).toBe(
      'Plugin package echo.tgz has no entry module index.js',
    );
    const damaged = gunzipSync(rawTarball(entries));
    damaged.write('garbage', 100);
    expect(await problemOf(damaged)).toMatch(/^Plugin package echo.tgz is not a readable tarball/);
  });

  it('unpacks only the files a package holds; a package stored with bad entries is refused there too', async () => {
    const cache = await mkdtemp(path.join(os.tmpdir(), 'trellis-cache-'));
    const good = rawTarball([
      ...entries,
      { path: 'lib/', type: 'Directory' },
      { path: 'lib/a.js', content: '1' },
    ]);
    const unpacked = await unpackPackage(good, sha256Hex(good), cache, limits);
    expect((await readdir(unpacked, { recursive: true })).sort()).toEqual([
      'index.js',
      'lib',
      'lib/a.js',
      'plugin.json',
    ]);
    const bad = rawTarball([
      ...entries,
      { path: '../a', content: 'x' },
      { path: '../b', content: 'x' },
    ]);
    await expect(unpackPackage(bad, sha256Hex(bad), cache, limits)).rejects.toThrow(
      /entry "\.\.\/a" climbs out of the package; entry "\.\.\/b" climbs out/,
    );
    expect(await readdir(cache)).toEqual([sha256Hex(good)]);
  });
});
