import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '#platform/config/load.js';
import { openDatabase, type TrellisDatabase } from '#store/database.js';
import * as pluginRepository from '#store/plugin-repository.js';
import { createLogger } from '#platform/logging.js';
import { openMigratedTestDatabase } from '../../../test/support/database.js';
import { createInstalledPlugins, type InstalledPlugins } from './installed-plugins.js';

const logger = createLogger({ Level: 'silent' });
let database: TrellisDatabase & { url: string };
/** Another process's connection to the same database: its changes reach the cache only by PostgreSQL. */
let other: TrellisDatabase;
let plugins: InstalledPlugins;

beforeAll(async () => {
  database = await openMigratedTestDatabase();
  other = await openDatabase(
    buildConfig({ Database: { Url: database.url, PoolSize: 2 }, Logging: { Level: 'silent' } }),
    logger,
  );
  // A snapshot that never expires on its own: only notifications (and `changed`) refresh it.
  plugins = createInstalledPlugins(database.db, database.listen, logger, { maxAgeMs: 3_600_000 });
});
afterAll(async () => {
  await plugins?.close();
  await other?.close();
  await database?.close();
});

const row = (type: string, version: string, parameters: object = {}) => ({
  type,
  version,
  description: `${type} ${version}`,
  specifications: '[]',
  parametersSchema: JSON.stringify(parameters),
  outputSchema: '{}',
  source: 'registry',
  sha256: `${type}-${version}`.padEnd(64, '0'),
  package: Buffer.from('not a real package'),
});

describe('installed plugins, as the API checks definitions against them', () => {
  it('finds a version, or the latest, matching the type case-insensitively', async () => {
    await pluginRepository.insert(database.db, row('Test/Kept', '1.2.0'));
    await pluginRepository.insert(database.db, row('Test/Kept', '1.10.0'));
    expect((await plugins.find('test/kept'))?.version).toBe('1.10.0');
    expect((await plugins.find('TEST/KEPT', '1.2.0'))?.version).toBe('1.2.0');
    expect(await plugins.find('Test/Kept', '9.9.9')).toBeUndefined();
    expect(await plugins.find('Test/Never')).toBeUndefined();
  });

  it('finds a plugin another process installed a moment ago, before any notification', async () => {
    expect(await plugins.find('Test/Fresh')).toBeUndefined();
    await pluginRepository.insert(other.db, row('Test/Fresh', '1.0.0'));
    expect((await plugins.find('Test/Fresh'))?.version).toBe('1.0.0');
  });

  it('forgets what another process uninstalled or replaced, when PostgreSQL notifies it', async () => {
    await pluginRepository.insert(database.db, row('Test/Gone', '1.0.0'));
    await pluginRepository.insert(database.db, row('Test/Changed', '1.0.0', { type: 'object' }));
    expect(await plugins.find('Test/Gone')).toBeDefined();
    expect((await plugins.find('Test/Changed'))?.parametersSchema).toEqual({ type: 'object' });

    await pluginRepository.remove(other.db, 'Test/Gone', '1.0.0');
    await pluginRepository.replacePackage(
      other.db,
      row('Test/Changed', '1.0.0', { type: 'object', required: ['x'] }),
    );
    await expect.poll(() => plugins.find('Test/Gone')).toBeUndefined();
    await expect
      .poll(async () => (await plugins.find('Test/Changed'))?.parametersSchema)
      .toEqual({ type: 'object', required: ['x'] });
  });

  it('forgets at once what this process says changed', async () => {
    await pluginRepository.insert(database.db, row('Test/Mine', '1.0.0'));
    expect(await plugins.find('Test/Mine')).toBeDefined();
    const unnotified = createInstalledPlugins(database.db, async () => async () => {}, logger, {
      maxAgeMs: 3_600_000,
    });
    expect(await unnotified.find('Test/Mine')).toBeDefined();
    await pluginRepository.remove(database.db, 'Test/Mine', '1.0.0');
    expect(await unnotified.find('Test/Mine')).toBeDefined();
    unnotified.changed();
    expect(await unnotified.find('Test/Mine')).toBeUndefined();
  });
});
