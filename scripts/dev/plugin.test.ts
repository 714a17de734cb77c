import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '#platform/config/load.js';
import { createCatalog } from '#plugin-host/catalog.js';
import { sha256Hex } from '#plugin-host/package.js';
import type { RegistryIndex } from '#plugin-host/registry.js';
import { writeTestPackage } from '../../test/support/plugin-packages.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'trellis-plugin-command-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** `npm run plugin -- <args>` typed in `cwd`, as an author would. */
async function plugin(cwd: string, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(
      'npm',
      ['--prefix', root, 'run', 'plugin', '--', ...args],
      {
        cwd,
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

const greeter = (version: string) =>
  writeTestPackage(
    {
      type: 'Acme/Greeter',
      version,
      parameters: { type: 'object', properties: { name: { type: 'string' } } },
      output: { type: 'object', properties: { text: { type: 'string' } } },
    },
    'export const execute = (parameters) => ({ text: `Hello, ${parameters.name}` });\n',
    path.join(scratch, 'sources'),
  );

describe('npm run plugin -- pack', () => {
  it('packs a folder into the same checksummed bytes every time, named by type and version', async () => {
    const folder = await greeter('1.0.0');
    const first = await plugin(scratch, 'pack', path.relative(scratch, folder), '--out', 'first');
    expect(first.code, first.stderr).toBe(0);
    const tarball = path.join(scratch, 'first', 'acme-greeter-1.0.0.tgz');
    const bytes = await readFile(tarball);
    expect(first.stdout).toContain(`Acme/Greeter 1.0.0: ${tarball} sha256 ${sha256Hex(bytes)}`);

    await utimes(path.join(folder, 'index.js'), new Date('2031-01-01'), new Date('2031-01-01'));
    expect((await plugin(scratch, 'pack', folder, '--out', 'second')).code).toBe(0);
    expect(await readFile(path.join(scratch, 'second', 'acme-greeter-1.0.0.tgz'))).toEqual(bytes);
  });

  it('publishes to a registry folder that Trellis installs from, replacing a republished version', async () => {
    const registry = path.join(scratch, 'registry');
    const [v1, v2] = [await greeter('1.0.0'), await greeter('2.0.0')];
    const builtIn = path.join(root, 'plugins', 'flow-log');
    const published = await plugin(scratch, 'pack', v1, builtIn, '--registry', 'registry');
    expect(published.code, published.stderr).toBe(0);
    expect((await plugin(scratch, 'pack', v2, v1, '--registry', registry)).code).toBe(0);

    const index = JSON.parse(
      await readFile(path.join(registry, 'index.json'), 'utf8'),
    ) as RegistryIndex;
    expect(index.plugins.map((entry) => `${entry.type} ${entry.version}`)).toEqual([
      'Flow/Log 1.0.0',
      'Acme/Greeter 2.0.0',
      'Acme/Greeter 1.0.0',
    ]);
    for (const entry of index.plugins) {
      expect(sha256Hex(await readFile(path.join(registry, entry.tarball)))).toBe(entry.sha256);
    }
    expect((await readdir(registry)).sort()).toEqual([
      'acme-greeter-1.0.0.tgz',
      'acme-greeter-2.0.0.tgz',
      'flow-log-1.0.0.tgz',
      'index.json',
    ]);

    const catalog = createCatalog(buildConfig({ Plugins: { Registry: registry } }), {
      builtInDirectory: path.join(scratch, 'no-built-ins'),
    });
    const resolved = await catalog.resolve('Acme/Greeter', 'latest');
    expect(resolved.manifest).toMatchObject({
      version: '2.0.0',
      output: { properties: { text: { type: 'string' } } },
    });
    expect(resolved.sha256).toBe(index.plugins[1]!.sha256);
  });

  it('refuses a folder that is not a plugin package, writing nothing', async () => {
    const broken = await writeTestPackage(
      { type: 'Acme', version: 'one', output: 'text' as never },
      'export const execute = () => ({});\n',
      path.join(scratch, 'broken'),
    );
    const refused = await plugin(scratch, 'pack', broken, '--out', 'nothing');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('plugin.json field "output" must be object');
    await expect(readdir(path.join(scratch, 'nothing'))).rejects.toThrow();

    const usage = await plugin(scratch, 'unpack', broken);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('usage: npm run plugin -- pack <folder>...');
  });
});
