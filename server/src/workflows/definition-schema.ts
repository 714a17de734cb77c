import type { Kysely } from 'kysely';
import * as pluginRepository from '../../../core/src/db/plugin-repository.js';
import type { Database } from '../../../core/src/db/tables.js';
import { typedDefinitionSchema } from '../../../core/src/definition/typed-schema.js';
import type { JsonSchema } from '../../../core/src/plugins/contract.js';

// Built again only when the installed plugins change (an install, update, uninstall or refresh
// changes an id or a sha256); editors ask for it often.
let cached: { key: string; schema: JsonSchema } | undefined;

/** `GET /schemas/workflow-definition.json`: the definition schema typed by the installed plugins. */
export async function servedDefinitionSchema(db: Kysely<Database>): Promise<JsonSchema> {
  const plugins = await pluginRepository.list(db);
  const key = plugins.map((plugin) => `${plugin.id}:${plugin.sha256}`).join(',');
  if (cached?.key !== key) cached = { key, schema: typedDefinitionSchema(plugins) };
  return cached.schema;
}
