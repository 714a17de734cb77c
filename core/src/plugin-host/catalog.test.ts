import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '#platform/config/load.js';
import { NotFound, Unavailable } from '#definition/errors.js';
import { errorOf } from '../../../test/support/expect-error.js';
import { builtInPluginsDirectory, createCatalog } from './catalog.js';
import { packFolder, sha256Hex } from './package.js';
import { buildRegistry, PackageIntegrityError, type RegistryIndex } from './registry.js';
import { writeTestPackage } from '../../../test/support/plugin-packages.js';

let registry: string;
let sources: string;

beforeAll(async () => {
  sources = await mkdtemp(path.join(os.tmpdir(), 'trellis-sources-'));
  registry = await mkdtemp(path.join(os.tmpdir(), 'trellis-registry-'));
  const echo = (version: string) =>
    writeTestPackage(
      { type: 'Acme/Echo', version },
      `export const execute = () => '${version}';\n`,
      sources,
    );
  // Built in two steps: a registry grows one package at a time.
  await buildRegistry(registry, [await echo('1.0.0'), await echo('1.10.0')]);
  await buildRegistry(registry, [await echo('1.2.0')]);
});

const catalogOf = (location?: string) =>
  createCatalog(buildConfig(location ? { Plugins: { Registry: location } } : {}));

describe('built-ins', () => {
  it('lists every package folder under plugins/', async () => {
    const folders = (await readdir(builtInPluginsDirectory(), { withFileTypes: true })).filter(
      (e) => e.isDirectory(),
    );
    const builtIns = await catalogOf().builtIns();
    expect(builtIns).toHaveLength(folders.length);
    expect(builtIns.map((entry) => entry.type)).toEqual(
      expect.arrayContaining([
        'Net/Http',
        'Flow/Delay',
        'Storage/Local',
        'Exec/Process',
        'Flow/NoOp',
      ]),
    );
    expect(builtIns.every((entry) => entry.source === 'builtin')).toBe(true);
  });

  it('resolves a built-in to its packed bytes, case-insensitively', async () => {
    const resolved = await catalogOf().resolve('net/http', 'latest');
    expect(resolved.manifest.type).toBe('Net/Http');
    expect(resolved.source).toBe('builtin');
    expect(resolved.sha256).toBe(sha256Hex(resolved.bytes));
    expect(resolved.bytes).toEqual(
      await packFolder(path.join(builtInPluginsDirectory(), 'net-http')),
    );
  });
});

describe('registry directory', () => {
  it('lists the registry beside the built-ins and picks the highest semver as latest', async () => {
    const catalog = catalogOf(registry);
    const echoes = (await catalog.list()).filter((entry) => entry.type === 'Acme/Echo');
    expect(echoes.map((entry) => entry.version)).toEqual(['1.0.0', '1.2.0', '1.10.0']);
    expect((await catalog.resolve('Acme/Echo')).manifest.version).toBe('1.10.0');
    const pinned = await catalog.resolve('Acme/Echo', '1.2.0');
    expect(pinned).toMatchObject({
      source: 'registry',
      manifest: { type: 'Acme/Echo', version: '1.2.0' },
    });
  });

  it('is NotFound naming what is available', async () => {
    const catalog = catalogOf(registry);
    const version = await errorOf(catalog.resolve('Acme/Echo', '9.9.9'), NotFound);
    expect(version.message).toBe(
      'Plugin "Acme/Echo" 9.9.9 is not in the catalog; available versions: 1.0.0, 1.2.0, 1.10.0',
    );
    const type = await errorOf(catalog.resolve('Acme/Nothing', '1.0.0'), NotFound);
    expect(type.message).toMatch(
      new RegExp(
        `^Plugin "Acme/Nothing" 1.0.0 is not in the catalog \\(the built-ins or the registry \\(Plugins\\.Registry\\)\\); available types: .*Acme/Echo`,
      ),
    );
  });

  it('refuses a tarball whose sha256 does not match the index', async () => {
    const tampered = await mkdtemp(path.join(os.tmpdir(), 'trellis-tampered-'));
    const folder = await writeTestPackage(
      { type: 'Acme/Tampered', version: '1.0.0' },
      'export const execute = () => 1;\n',
      sources,
    );
    const index = await buildRegistry(tampered, [folder]);
    await writeFile(
      path.join(tampered, index.plugins[0]!.tarball),
      await packFolder(path.join(sources, 'acme-echo-1.0.0')),
    );
    const error = await errorOf(
      catalogOf(tampered).resolve('Acme/Tampered', '1.0.0'),
      PackageIntegrityError,
    );
    expect(error.message).toMatch(
      /^Checksum mismatch for plugin "Acme\/Tampered" 1.0.0 from the registry: the index says sha256 [0-9a-f]{64} but its tarball has [0-9a-f]{64}; refusing to install it$/,
    );
  });

  it('refuses a package that is not what the index says it is', async () => {
    const lying = await mkdtemp(path.join(os.tmpdir(), 'trellis-lying-'));
    const index = await buildRegistry(lying, [path.join(sources, 'acme-echo-1.0.0')]);
    const entry = { ...index.plugins[0]!, type: 'Acme/Other' };
    await writeFile(
      path.join(lying, 'index.json'),
      JSON.stringify({ plugins: [entry] } satisfies RegistryIndex),
    );
    const error = await errorOf(
      catalogOf(lying).resolve('Acme/Other', '1.0.0'),
      PackageIntegrityError,
    );
    expect(error.message).toMatch(
      /holds "Acme\/Echo" 1.0.0, but the index lists it as "Acme\/Other" 1.0.0/,
    );
  });

  it('reports an unreachable registry as Unavailable', async () => {
    const error = await errorOf(
      catalogOf('/nonexistent/registry').resolve('Acme/Echo'),
      Unavailable,
    );
    expect(error.message).not.toContain('/nonexistent');
    expect(error.message).toMatch(
      /^The plugin registry \(Plugins\.Registry\) is unavailable: its index\.json cannot be read/,
    );
  });
});

describe('registry over HTTP', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createServer((request, response) => {
      const file = path.join(registry, path.basename(request.url ?? ''));
      readFile(file).then(
        (bytes) => response.end(bytes),
        () => response.writeHead(404).end(),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reads the index and tarballs relative to it, checking the sha256', async () => {
    for (const location of [base, `${base}/`, `${base}/index.json`]) {
      const resolved = await catalogOf(location).resolve('Acme/Echo', '1.2.0');
      expect(resolved.manifest.version).toBe('1.2.0');
      expect(resolved.sha256).toBe(
        sha256Hex(await readFile(path.join(registry, 'acme-echo-1.2.0.tgz'))),
      );
    }
  });
});
