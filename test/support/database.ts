/**
 * A migrated Trellis database for integration tests: a fresh PostgreSQL database of the test
 * server (see `services.ts`), opened the way the service opens it.
 */
import { buildConfig } from '#platform/config/load.js';
import { openDatabase, type TrellisDatabase } from '#store/database.js';
import { migrateToLatest } from '#store/migrate.js';
import { createLogger } from '#platform/logging.js';
import { createTestDatabase } from './services.js';

export async function openMigratedTestDatabase(): Promise<TrellisDatabase & { url: string }> {
  const url = await createTestDatabase();
  const config = buildConfig({ Database: { Url: url, PoolSize: 4 }, Logging: { Level: 'silent' } });
  const logger = createLogger(config.Logging);
  const database = await openDatabase(config, logger);
  await migrateToLatest(database.db, logger);
  return { ...database, url };
}
