import type { Kysely } from 'kysely';
import * as configurationRepository from '../../../core/src/db/configuration-repository.js';
import * as pluginRepository from '../../../core/src/db/plugin-repository.js';
import type { Database } from '../../../core/src/db/tables.js';
import type { DefinitionLimits } from '../../../core/src/definition/limits.js';
import { parseDefinition } from '../../../core/src/definition/parse.js';
import { checkReferences } from '../../../core/src/definition/references.js';
import type { WorkflowDefinition } from '../../../core/src/definition/types.js';
import { Invalid } from '../../../core/src/errors.js';

/**
 * Validates a definition's text as add and update both require (DESIGN.md §6): JSON, schema,
 * DAG checks within the configured `limits`, then that every plugin and configuration it names
 * exists. 400 with one message per problem; nothing is stored when there is any.
 */
export async function validateWorkflowDefinition(
  db: Kysely<Database>,
  text: string,
  limits: DefinitionLimits,
): Promise<WorkflowDefinition> {
  const parsed = parseDefinition(text, limits);
  if (!parsed.ok) throw new Invalid(parsed.errors.map((error) => `body.definition: ${error}`));
  const problems = await checkReferences(parsed.definition, {
    plugin: async (type, version) =>
      (version === undefined
        ? await pluginRepository.latestByType(db, type)
        : await pluginRepository.findByTypeVersion(db, type, version)) !== undefined,
    configuration: async (name) =>
      (await configurationRepository.findByName(db, name)) !== undefined,
  });
  if (problems.length > 0)
    throw new Invalid(problems.map((problem) => `body.definition: ${problem}`));
  return parsed.definition;
}
