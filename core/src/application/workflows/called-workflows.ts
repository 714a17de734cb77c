import type { Kysely } from 'kysely';
import type { Database } from '#store/tables.js';
import * as workflowRepository from '#store/workflow-repository.js';
import type { DefinitionLimits } from '#definition/limits.js';
import { parseDefinition } from '#definition/parse.js';
import {
  checkWorkflowCalls,
  workflowCalls,
  type CalledWorkflow,
} from '#definition/subworkflows.js';
import type { WorkflowDefinition } from '#definition/types.js';
import type { Problem } from '#definition/validation/problem.js';

/**
 * The problems of a definition's subworkflow tasks against the stored workflows of its project: a
 * called workflow that does not exist there (another project's is not told apart), a call that cycles back to `self` (subworkflows.ts). Each called
 * workflow's current definition is read once; one that no longer parses calls nothing.
 */
export async function checkCalledWorkflows(
  db: Kysely<Database>,
  projectId: string,
  definition: WorkflowDefinition,
  self: { id: string } | undefined,
  limits: DefinitionLimits,
): Promise<Problem[]> {
  if (workflowCalls(definition).length === 0) return [];
  return checkWorkflowCalls(definition, self, async (id): Promise<CalledWorkflow | undefined> => {
    const row = await workflowRepository.findDefinitionById(db, id);
    if (!row || row.projectId !== projectId) return undefined;
    const parsed = parseDefinition(row.definition, limits);
    const calls = parsed.ok ? workflowCalls(parsed.definition).map((call) => call.workflowId) : [];
    return { name: row.name, calls };
  });
}
