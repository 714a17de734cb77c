import type { Kysely } from 'kysely';
import type { TrellisConfig } from '#platform/config/types.js';
import type { ConfigurationInput } from '#store/configuration-repository.js';
import * as pluginRepository from '#store/plugin-repository.js';
import type { InstalledPlugin } from '#store/plugin-repository.js';
import type {
  Database,
  PluginConfigurationRow,
  PluginSpecificationDescriptor,
} from '#store/tables.js';
import { Conflict, Invalid } from '#definition/errors.js';
import { problemAt } from '#definition/validation/problem.js';
import {
  REDACTED,
  changedDestinations,
  checkConfigurationSpecifications,
  encryptSecrets,
  redactSecrets,
} from '#plugin-host/settings.js';
import { taskTypes } from '#plugin-host/usages.js';
import { secretKeys } from '#plugin-host/secret-keys.js';

/**
 * Checks a configuration body against the plugin it names and returns what to store: the plugin
 * (type and version) must be installed (else `Conflict`), the specifications must fit its declared settings, and
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
    // What is installed is the instance's state, not the request's shape: 409, like a name taken.
    const installed = await pluginRepository.listByType(db, body.type);
    throw new Conflict(
      installed.length === 0
        ? {
            code: 'plugin.not_installed',
            path: 'body.type',
            message: `plugin "${body.type}" is not installed; install it with POST /plugins, or name one GET /plugins lists.`,
          }
        : {
            code: 'plugin.not_installed',
            path: 'body.version',
            message: `plugin "${body.type}" ${body.version} is not installed (installed: ${installed
              .map((p) => p.version)
              .join(', ')}).`,
          },
    );
  }
  const specifications = { ...body.specifications };
  const kept = plugin.specifications.filter(
    ({ key, secret }) =>
      secret && specifications[key] === REDACTED && existing?.specifications[key] !== undefined,
  );
  for (const { key } of kept) specifications[key] = existing!.specifications[key];
  if (existing && kept.length > 0) refuseMovingKeptSecrets(plugin, existing, specifications, kept);
  const problems = checkConfigurationSpecifications(plugin, specifications);
  if (problems.length > 0) {
    throw new Invalid(problems.map((message) => problemAt('body.specifications', message)));
  }
  return {
    name: body.name,
    type: plugin.type,
    version: plugin.version,
    specifications: encryptSecrets(plugin.specifications, specifications, await secretKeys(config)),
  };
}

/**
 * A secret kept as `"********"` stays where it was sent: an update that changes where (a setting
 * the plugin marks `destination`, or the plugin type) must give it again. Otherwise a `config`
 * user who never saw a token could point its configuration at their own server.
 */
function refuseMovingKeptSecrets(
  plugin: InstalledPlugin,
  existing: PluginConfigurationRow,
  specifications: Record<string, unknown>,
  kept: readonly PluginSpecificationDescriptor[],
): void {
  const moved =
    existing.type !== plugin.type
      ? `the plugin type (${existing.type} to ${plugin.type})`
      : changedDestinations(plugin.specifications, existing.specifications, specifications).join(
          ' and ',
        );
  if (moved === '') return;
  throw new Invalid(
    kept.map(({ key }) => ({
      code: 'configuration.secret_required',
      path: `body.specifications.${key}`,
      message:
        `this update changes ${moved}, where the stored secret is sent: ` +
        `send ${key} again (or leave it out to drop it).`,
    })),
  );
}

/** The stored specifications with secrets replaced by `"********"`. */
export async function redactedSpecifications(
  db: Kysely<Database>,
  row: PluginConfigurationRow,
): Promise<Record<string, unknown>> {
  const plugin = await pluginRepository.findByTypeVersion(db, row.type, row.version);
  return redactSecrets(plugin?.specifications ?? [], row.specifications);
}

/**
 * Names of the stored workflows of the configuration's project with a task whose `type` names it
 * (another project's workflows name their own project's configurations).
 */
export async function workflowsUsingConfiguration(
  db: Kysely<Database>,
  configuration: Pick<PluginConfigurationRow, 'projectId' | 'name'>,
): Promise<string[]> {
  const workflows = await db
    .selectFrom('workflow')
    .select(['name', 'definition'])
    .where('projectId', '=', configuration.projectId)
    .where('draftUntil', 'is', null)
    .execute();
  return workflows
    .filter((workflow) =>
      taskTypes(workflow.definition).some((type) => type === configuration.name),
    )
    .map((workflow) => workflow.name)
    .sort();
}
