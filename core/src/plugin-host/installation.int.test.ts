import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMigratedTestDatabase } from '../../../test/support/database.js';
import { buildConfig } from '#platform/config/load.js';
import type { TrellisConfig } from '#platform/config/types.js';
import * as configurationRepository from '#store/configuration-repository.js';
import type { TrellisDatabase } from '#store/database.js';
import * as pluginRepository from '#store/plugin-repository.js';
import * as projectRepository from '#store/project-repository.js';
import type { Database } from '#store/tables.js';
import * as workflowRepository from '#store/workflow-repository.js';
import { Conflict, NotFound } from '#definition/errors.js';
import { errorOf } from '../../../test/support/expect-error.js';
import { createCatalog, type PluginCatalog } from './catalog.js';
import { installBuiltIns, installPlugin, uninstallPlugin, updatePlugin } from './installation.js';
import { pluginCacheDirectory } from './package.js';
import { buildRegistry, PackageIntegrityError } from './registry.js';
import { createPluginRunner, PluginInputError, type PluginRunRequest } from './runner.js';
import { encryptSecrets, loadSecretKeys } from './settings.js';
import { writeTestPackage } from '../../../test/support/plugin-packages.js';
import { createRecordingLogger } from '../../../test/support/plugin-folder.js';

// A fresh nonce makes fresh package bytes, so no earlier run left them in the cache: the
// runner has to fetch them from the database.
const nonce = randomUUID();
const TYPE = 'Test/Greeter';
const settings = [
  {
    key: 'greeting',
    type: 'string',
    required: false,
    secret: false,
    description: '',
    default: 'Hello',
  },
  { key: 'apiKey', type: 'string', required: false, secret: true, description: '' },
] as const;
const version1 = `// ${nonce}
export function execute(parameters, context) {
  context.logger.info('greeting ' + parameters.name + ' with key ' + context.specifications.apiKey);
  return { text: context.specifications.greeting + ', ' + parameters.name, version: '1.0.0' };
}
`;
// Version 2 imports a package the host installed (jsonata), which must resolve from the cache.
const version2 = `// ${nonce}
import jsonata from 'jsonata';
export async function execute(parameters, context) {
  const upper = await jsonata('$uppercase(name)').evaluate(parameters);
  return { text: context.specifications.greeting + ', ' + upper, version: '2.0.0' };
}
`;
const parameters = { type: 'object', required: ['name'], properties: { name: { type: 'string' } } };

let database: TrellisDatabase;
let db: Kysely<Database>;
let config: TrellisConfig;
let catalog: PluginCatalog;
let registry: string;
/** The project `default`, where the configurations here are made unless told otherwise. */
let project: string;

beforeAll(async () => {
  database = await openMigratedTestDatabase();
  db = database.db;
  project = (await projectRepository.findByIdOrName(db, 'default'))!.id;
  const sources = await mkdtemp(path.join(os.tmpdir(), 'trellis-greeter-'));
  registry = await mkdtemp(path.join(os.tmpdir(), 'trellis-registry-'));
  const common = { type: TYPE, specifications: [...settings], parameters };
  await buildRegistry(registry, [
    await writeTestPackage({ ...common, version: '1.0.0' }, version1, sources),
    await writeTestPackage({ ...common, version: '2.0.0', quick: true }, version2, sources),
  ]);
  config = buildConfig({
    DataDirectory: await mkdtemp(path.join(os.tmpdir(), 'trellis-data-')),
    Plugins: { Registry: registry },
    Logging: { Level: 'silent' },
  });
  catalog = createCatalog(config);
});
afterAll(() => database?.close());

const executionId = randomUUID();
const task = { name: 'Greet', executionId, attempt: 1, idempotencyKey: `${executionId}:greet:1` };
const request = (extra: Partial<PluginRunRequest> = {}): PluginRunRequest => ({
  type: TYPE,
  parameters: { name: 'Ann' },
  logger: createRecordingLogger(),
  task,
  ...extra,
});
const definition = (name: string, ...types: unknown[]) =>
  JSON.stringify({ name, tasks: types.map((type, i) => ({ name: `T${i}`, type })) });

describe('plugin lifecycle over a registry directory', () => {
  it('refuses what the catalog does not have, naming what it has', async () => {
    const unknown = await errorOf(
      installPlugin(db, catalog, { type: 'Test/Nothing', version: '1.0.0' }),
      NotFound,
    );
    expect(unknown.message).toMatch(
      /^Plugin "Test\/Nothing" 1.0.0 is not in the catalog .*available types: .*Test\/Greeter/,
    );
    const version = await errorOf(
      installPlugin(db, catalog, { type: TYPE, version: '3.0.0' }),
      NotFound,
    );
    expect(version.message).toBe(
      'Plugin "Test/Greeter" 3.0.0 is not in the catalog; available versions: 1.0.0, 2.0.0',
    );
  });

  it('installs version 1 with its package, once', async () => {
    const installed = await installPlugin(db, catalog, { type: TYPE, version: '1.0.0' });
    expect(installed).toMatchObject({
      type: TYPE,
      version: '1.0.0',
      source: 'registry',
      parametersSchema: parameters,
      quick: false,
    });
    expect(installed.specifications.map((s) => s.key)).toEqual(['greeting', 'apiKey']);
    expect(await pluginRepository.findPackage(db, installed.sha256)).toEqual(
      await readFile(path.join(registry, 'test-greeter-1.0.0.tgz')),
    );
    expect(await pluginRepository.list(db, { group: 'test' })).toHaveLength(1);

    const again = await errorOf(
      installPlugin(db, catalog, { type: 'test/greeter', version: '1.0.0' }),
      Conflict,
    );
    expect(again.message).toBe('Plugin "Test/Greeter" 1.0.0 is already installed');
  });

  it('runs it on a worker that has never seen it, from the database', async () => {
    const cacheDirectory = await mkdtemp(path.join(os.tmpdir(), 'trellis-cache-'));
    const runner = createPluginRunner({ db, config, cacheDirectory });
    const key = await loadSecretKeys(config);
    const logger = createRecordingLogger();
    const output = await runner.run(
      request({
        version: '1.0.0',
        logger,
        specifications: encryptSecrets([...settings], { apiKey: 'k-secret' }, key),
      }),
    );
    expect(output).toEqual({ text: 'Hello, Ann', version: '1.0.0' });
    expect(logger.entries).toEqual([{ level: 'Info', message: 'greeting Ann with key ********' }]);
    const [row] = await pluginRepository.listByType(db, TYPE);
    expect((await readdir(cacheDirectory)).sort()).toEqual(['node_modules', row!.sha256].sort());

    await expect(runner.run(request({ parameters: {} }))).rejects.toThrow(
      new PluginInputError('Plugin "Test/Greeter" 1.0.0: parameter "name" is required'),
    );
    await expect(runner.run(request({ version: '2.0.0' }))).rejects.toThrow(
      new PluginInputError(
        'Plugin "Test/Greeter" 2.0.0 is not installed; install it with POST /plugins',
      ),
    );
    expect(await runner.installedManifest(TYPE, 'latest')).toMatchObject({ version: '1.0.0' });
    expect(await runner.installedManifest(TYPE, '2.0.0')).toBeUndefined();
  });

  it('updates to version 2, moving configurations along, unless a workflow pins version 1', async () => {
    const pinned = await workflowRepository.insert(db, {
      name: 'PinnedGreeting',
      definition: definition('PinnedGreeting', { plugin: TYPE, version: '1.0.0' }),
    });
    await configurationRepository.insert(db, project, {
      name: 'friendly-greeter',
      type: TYPE,
      version: '1.0.0',
      specifications: { greeting: 'Hi' },
    });
    const blocked = await errorOf(
      updatePlugin(db, catalog, { type: TYPE, version: '2.0.0' }),
      Conflict,
    );
    expect(blocked.message).toBe(
      'Plugin "Test/Greeter" cannot be updated to 2.0.0: version 1.0.0 is in use by workflows "PinnedGreeting"; change or delete them first',
    );
    await workflowRepository.update(db, pinned.id, {
      name: 'PinnedGreeting',
      definition: definition('PinnedGreeting', { plugin: TYPE }),
    });

    const { plugin: updated, changed } = await updatePlugin(db, catalog, {
      type: TYPE,
      version: 'latest',
    });
    expect(changed).toBe(true);
    expect(updated.version).toBe('2.0.0');
    expect((await pluginRepository.listByType(db, TYPE)).map((p) => p.version)).toEqual(['2.0.0']);
    expect(
      (await configurationRepository.findByName(db, project, 'friendly-greeter'))?.version,
    ).toBe('2.0.0');

    const runner = createPluginRunner({ db, config });
    expect(await runner.run(request({ specifications: { greeting: 'Hi' } }))).toEqual({
      text: 'Hi, ANN',
      version: '2.0.0',
    });
    expect(await readdir(pluginCacheDirectory(config))).toContain(updated.sha256);
    expect(await runner.installedManifest(TYPE)).toMatchObject({ version: '2.0.0', quick: true });
    expect(updated.quick).toBe(true);
  });

  it('changes nothing for the version installed, and refuses updates that make no sense', async () => {
    const before = await pluginRepository.listByType(db, TYPE);
    const same = await updatePlugin(db, catalog, { type: TYPE, version: '2.0.0' });
    expect(same).toEqual({ plugin: before[0], changed: false });
    expect(await pluginRepository.listByType(db, TYPE)).toEqual(before);
    const missing = await errorOf(
      updatePlugin(db, catalog, { type: 'Test/Other', version: '1.0.0' }),
      NotFound,
    );
    expect(missing.message).toMatch(
      /^Plugin "Test\/Other" is not installed, so it cannot be updated/,
    );
    await errorOf(updatePlugin(db, catalog, { type: TYPE, version: '9.0.0' }), NotFound);

    // Installed before rows kept whether a plugin is quick: updating to its own version tells.
    await db.updateTable('plugin').set({ quick: null }).where('id', '=', before[0]!.id).execute();
    const told = await updatePlugin(db, catalog, { type: TYPE, version: '2.0.0' });
    expect(told).toEqual({ plugin: { ...before[0], quick: true }, changed: false });
  });

  it('refuses to uninstall what a workflow or configuration of any project uses, naming them', async () => {
    await workflowRepository.insert(db, {
      name: 'ViaConfiguration',
      definition: definition('ViaConfiguration', 'friendly-greeter'),
    });
    // Another project: its own configuration and a workflow using it count; a name it has no
    // configuration for (default's) is not a use.
    const other = await projectRepository.insert(db, 'greeters');
    await configurationRepository.insert(db, other.id, {
      name: 'partner-greeter',
      type: TYPE,
      version: '2.0.0',
      specifications: {},
    });
    await workflowRepository.insert(db, {
      projectId: other.id,
      name: 'PartnerGreeting',
      definition: definition('PartnerGreeting', 'partner-greeter'),
    });
    await workflowRepository.insert(db, {
      projectId: other.id,
      name: 'NamesDefaults',
      definition: definition('NamesDefaults', 'friendly-greeter'),
    });
    const inUse = await errorOf(uninstallPlugin(db, { type: TYPE, version: '2.0.0' }), Conflict);
    expect(inUse.message).toBe(
      'Plugin "Test/Greeter" 2.0.0 cannot be uninstalled: version 2.0.0 is in use by workflows "PartnerGreeting", "PinnedGreeting", "ViaConfiguration" and configurations "friendly-greeter", "partner-greeter"; change or delete them first',
    );
  });

  it('uninstalls once nothing uses it; then tasks fail clearly', async () => {
    for (const workflow of await workflowRepository.listAll(db))
      await workflowRepository.remove(db, workflow.id);
    for (const configuration of await configurationRepository.listByPlugin(db, TYPE))
      await configurationRepository.remove(db, configuration.id);

    await uninstallPlugin(db, { type: TYPE, version: '2.0.0' });
    expect(await pluginRepository.listByType(db, TYPE)).toEqual([]);
    await expect(createPluginRunner({ db, config }).run(request())).rejects.toThrow(
      new PluginInputError('Plugin "Test/Greeter" is not installed; install it with POST /plugins'),
    );
    const again = await errorOf(uninstallPlugin(db, { type: TYPE, version: '2.0.0' }), NotFound);
    expect(again.message).toBe('Plugin "Test/Greeter" 2.0.0 is not installed');
  });

  it('refuses a registry package whose checksum does not match, installing nothing', async () => {
    const tarball = path.join(registry, 'test-greeter-1.0.0.tgz');
    await writeFile(tarball, await readFile(path.join(registry, 'test-greeter-2.0.0.tgz')));
    const mismatch = await errorOf(
      installPlugin(db, catalog, { type: TYPE, version: '1.0.0' }),
      PackageIntegrityError,
    );
    expect(mismatch.message).toMatch(
      /^Checksum mismatch for plugin "Test\/Greeter" 1.0.0 from the registry/,
    );
    expect(await pluginRepository.listByType(db, TYPE)).toEqual([]);
  });
});

describe('built-ins', () => {
  it('installs every built-in once, and they run from the database', async () => {
    const messages: string[] = [];
    const logger = { info: (_details: object, message: string) => void messages.push(message) };
    const first = await installBuiltIns(db, catalog, logger);
    const builtIns = await catalog.builtIns();
    expect(first.map((p) => p.type).sort()).toEqual(builtIns.map((b) => b.type).sort());
    expect(first.every((p) => p.source === 'builtin')).toBe(true);
    expect(messages).toEqual([`Installed ${builtIns.length} built-in plugin(s)`]);
    expect(await installBuiltIns(db, catalog, logger)).toEqual([]);

    // A row left by an older Trellis (same version, older package, no output schema, effects
    // undeclared) is refreshed from the package this Trellis ships, keeping its id.
    const hash = first.find((plugin) => plugin.type === 'Security/Hash')!;
    await db
      .updateTable('plugin')
      .set({
        sha256: 'f'.repeat(64),
        outputSchema: '{}',
        effects: 'calls',
        package: Buffer.from('old'),
      })
      .where('id', '=', hash.id)
      .execute();
    const refreshed = await installBuiltIns(db, catalog, logger);
    expect(refreshed.map((plugin) => [plugin.id, plugin.sha256])).toEqual([[hash.id, hash.sha256]]);
    expect(refreshed[0]!.outputSchema).toMatchObject({
      required: expect.arrayContaining(['digest']),
    });
    expect(refreshed[0]!.effects).toBe('pure');
    expect(messages.at(-1)).toBe(
      'Refreshed 1 built-in plugin(s) whose row was older than the package at the same version',
    );
    expect(await installBuiltIns(db, catalog, logger)).toEqual([]);

    // A row from before rows kept whether the plugin is quick: refreshed, the package unchanged.
    const json = first.find((plugin) => plugin.type === 'Data/Json')!;
    expect(json.quick).toBe(true);
    await db.updateTable('plugin').set({ quick: null }).where('id', '=', json.id).execute();
    const known = await installBuiltIns(db, catalog, logger);
    expect(known.map((plugin) => [plugin.id, plugin.quick])).toEqual([[json.id, true]]);
    expect(first.find((plugin) => plugin.type === 'Flow/Delay')!.quick).toBe(false);

    const runner = createPluginRunner({ db, config });
    expect(
      await runner.run(request({ type: 'Security/Hash', parameters: { input: 'abc' } })),
    ).toMatchObject({
      digest: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    });
    await runner.run(
      request({
        type: 'Storage/Local',
        parameters: { operation: 'write', path: 'a/b.txt', content: 'hi' },
      }),
    );
    expect(await readFile(path.join(config.Plugins.StorageRoot, 'a/b.txt'), 'utf8')).toBe('hi');
    await expect(
      runner.run(request({ type: 'Exec/Process', parameters: { command: process.execPath } })),
    ).rejects.toThrow(/Plugins.AllowProcessExecution/);
  });
});
