import type { Kysely } from 'kysely';
import type { TrellisConfig } from '../../../core/src/config/types.js';
import type { Database } from '../../../core/src/db/tables.js';
import type { Logger } from '../../../core/src/logging.js';
import type { PluginRunner } from '../../../core/src/plugins/runner.js';

/** What the activities need; built once per worker process. */
export interface ActivityDeps {
  db: Kysely<Database>;
  runner: PluginRunner;
  logger: Logger;
  config: TrellisConfig;
}
