import type { Kysely } from 'kysely';
import type { Database, WorkflowRow } from '#store/tables.js';
import * as triggerRepository from '#store/trigger-repository.js';
import * as workflowRepository from '#store/workflow-repository.js';
import { Conflict } from '#definition/errors.js';
import {
  howCallerBreaks,
  interfaceBreaks,
  type InterfaceBreak,
  type InterfaceCaller,
} from '#definition/interface-changes.js';
import type { DefinitionLimits } from '#definition/limits.js';
import { parseDefinition } from '#definition/parse.js';
import { workflowCalls } from '#definition/subworkflows.js';
import type { WorkflowDefinition } from '#definition/types.js';
import type { Problem } from '#definition/validation/problem.js';
import { propertyValue } from '../triggers/schedule-policies.js';

/** A known caller of a workflow, named as a message names it. */
interface NamedCaller extends InterfaceCaller {
  name: string;
}

/** A breaking change of a workflow's interface and the known callers it breaks, each with how. */
export interface BreakingChange {
  change: InterfaceBreak;
  callers: { name: string; how: string }[];
}

const HOW_TO_KEEP: Record<InterfaceBreak['kind'], string> = {
  'input.required': 'give it a default or keep it optional',
  'input.type': 'keep its type, or declare an input of the new type under another name',
  'input.removed': 'keep declaring it (optional if it is no longer needed)',
  'output.removed': 'keep the output',
};

/**
 * The breaking changes of `workflow`'s declared inputs and outputs that `next` would make
 * (interface-changes.ts), with the known callers each breaks: subworkflow tasks of the project's
 * other workflows that call it, and its TimeBased triggers, whose fixed inputs each run is given.
 * A change that breaks only known callers (inputs declared for the first time) counts only when
 * it breaks one. Refused with a 409 `workflow.breaking_change` naming each change and, as
 * `workflow.broken_caller`, each caller, unless `acceptBreaking`; then the changes are returned so
 * that the answer can say what was accepted. A current definition that no longer parses is not
 * compared.
 */
export async function checkInterfaceChange(
  db: Kysely<Database>,
  workflow: WorkflowRow,
  next: WorkflowDefinition,
  limits: DefinitionLimits,
  acceptBreaking: boolean,
): Promise<BreakingChange[]> {
  const current = parseDefinition(workflow.definition, limits);
  if (!current.ok) return [];
  const changes = interfaceBreaks(current.definition, next);
  if (changes.length === 0) return [];
  const callers = await knownCallers(db, workflow, limits);
  const breaking = changes
    .map((change) => ({
      change,
      callers: callers.flatMap(({ name, ...caller }) => {
        const how = howCallerBreaks(change, caller);
        return how === null ? [] : [{ name, how }];
      }),
    }))
    .filter(({ change, callers }) => change.breaksUnseenCallers || callers.length > 0);
  if (breaking.length > 0 && !acceptBreaking) throw new Conflict(breaking.flatMap(problemsOf));
  return breaking;
}

/** What was accepted, one sentence: `inputs.amount becomes required (number); …`. */
export function acceptedBreaks(breaking: readonly BreakingChange[]): string {
  const callers = new Set(breaking.flatMap((found) => found.callers.map((caller) => caller.name)));
  const changes = breaking.map(({ change }) => `${change.path} ${change.change}`).join('; ');
  const broken = callers.size === 0 ? '' : ` (breaking ${[...callers].join(', ')})`;
  return `Breaking changes accepted: ${changes}${broken}.`;
}

function problemsOf({ change, callers }: BreakingChange): Problem[] {
  const whom =
    callers.length === 0
      ? 'callers that start it as they do today fail'
      : `${callers.length} known caller${callers.length === 1 ? '' : 's'} fail${callers.length === 1 ? 's' : ''}`;
  return [
    {
      code: 'workflow.breaking_change',
      path: change.path,
      message: `${change.change}, so ${whom}: ${HOW_TO_KEEP[change.kind]}, or send the update again with acceptBreaking=true to store it anyway`,
    },
    ...callers.map(({ name, how }) => ({
      code: 'workflow.broken_caller',
      path: change.path,
      message: `${name} ${how}`,
    })),
  ];
}

/**
 * The callers of `workflow` Trellis knows of: each subworkflow task of the project's other
 * workflows that calls it (a definition that no longer parses calls nothing), and each of its
 * TimeBased triggers.
 */
async function knownCallers(
  db: Kysely<Database>,
  workflow: WorkflowRow,
  limits: DefinitionLimits,
): Promise<NamedCaller[]> {
  const id = workflow.id.toLowerCase();
  const callers: NamedCaller[] = [];
  for (const row of await workflowRepository.listMentioning(db, workflow.projectId, id)) {
    if (row.id === workflow.id) continue;
    const parsed = parseDefinition(row.definition, limits);
    if (!parsed.ok) continue;
    for (const call of workflowCalls(parsed.definition)) {
      if (call.workflowId !== id) continue;
      callers.push({
        name: `task '${call.taskName}' of workflow "${row.name}"`,
        inputs: parsed.definition.tasks[call.index]?.inputs,
        readsOutputs: true,
      });
    }
  }
  for (const trigger of await triggerRepository.listByWorkflow(db, workflow.id)) {
    if (trigger.type !== 'TimeBased') continue;
    const inputs = propertyValue(trigger.properties, 'inputs');
    callers.push({
      name: `TimeBased trigger ${trigger.id}`,
      inputs: isRecord(inputs) ? inputs : undefined,
      readsOutputs: false,
    });
  }
  return callers;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
