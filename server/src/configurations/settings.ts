import type { Kysely } from 'kysely';
import type { TrellisConfig } from '../../../core/src/config/types.js';
import type { ConfigurationInput } from '../../../core/src/db/configuration-repository.js';
import * as pluginRepository from '../../../core/src/db/plugin-repository.js';
import type { Database, PluginConfigurationRow } from '../../../core/src/db/tables.js';
import { Invalid } from '../../../core/src/errors.js';
import {
  REDACTED,
  checkConfigurationSpecifications,
  encryptSecrets,
  redactSecrets,
} from '../../../core/src/plugins/settings.js';
import { taskTypes } from '../../../core/src/plugins/usages.js';
import { secretKeys } from '../secret-keys.js';

/**
 * Checks a configuration body against the plugin it names and returns what to store: the plugin
 * (type and version) must be installed, the specifications must fit its declared settings, and
 * secret values are encrypted with the current key (a kept value encrypted with a previous key is
 * encrypted again). A secret sent back as `"********"` (as GET shows it) keeps its stored value,
 * so a client can round-trip a configuration without knowing its secrets.
 */
export async function prepareConfiguration(
  db: Kysely<Database>,
  config: TrellisConfig,
  body: ConfigurationInput,
  existing?: PluginConfigurationRow,
): Promise<ConfigurationInput> {
  const plugin = await pluginRepository.findByTypeVersion(db, body.type, body.version);
  if (!plugin) {
    const installed = await pluginRepository.listByType(db, body.type);
    throw new Invalid(
      installed.length === 0
        ? `body.type: plugin "${body.type}" is not installed.`
        : `body.version: plugin "${body.type}" ${body.version} is not installed (installed: ${installed
            .map((p) => p.version)
            .join(', ')}).`,
    );
  }
  const specifications = { ...body.specifications };
  for (const descriptor of plugin.specifications) {
    const stored = existing?.specifications[descriptor.key];
    if (descriptor.secret && specifications[descriptor.key] === REDACTED && stored !== undefined) {
      specifications[descriptor.key] = stored;
    }
  }
  const problems = checkConfigurationSpecifications(plugin, specifications);
  if (problems.length > 0) throw new Invalid(problems);
  return {
    name: body.name,
    type: plugin.type,
    version: plugin.version,
    specifications: encryptSecrets(plugin.specifications, specifications, await secretKeys(config)),
  };
}

/** The stored specifications with secrets replaced by `"********"`. */
export async function redactedSpecifications(
  db: Kysely<Database>,
  row: PluginConfigurationRow,
): Promise<Record<string, unknown>> {
  const plugin = await pluginRepository.findByTypeVersion(db, row.type, row.version);
  return redactSecrets(plugin?.specifications ?? [], row.specifications);
}

/** Names of stored workflows with a task whose `type` names this configuration. */
export async function workflowsUsingConfiguration(
  db: Kysely<Database>,
  name: string,
): Promise<string[]> {
  const workflows = await db.selectFrom('workflow').select(['name', 'definition']).execute();
  return workflows
    .filter((workflow) => taskTypes(workflow.definition).some((type) => type === name))
    .map((workflow) => workflow.name)
    .sort();
}
