import type { Kysely } from 'kysely';
import { decisionsByTask } from '#store/approval-repository.js';
import type { Database } from '#store/tables.js';
import type { ExpressionScope } from '#definition/expressions/evaluate.js';
import { referencedApprovals } from '#definition/expressions/references.js';
import { forEachString } from '#definition/json-strings.js';
import type { LoadedDefinition } from './loaded-definition.js';

/**
 * What expressions read of approvals: `Approval('Task')` (a task's decision) and `Approval()`
 * (the reading task's own), loaded only for the expressions that read them. The names each task
 * reads are worked out once per loaded definition.
 */
const readsByDefinition = new WeakMap<LoadedDefinition, Map<string, string[]>>();

/** The approval names the texts read (`''` for `Approval()`). */
export function approvalReads(texts: readonly string[]): string[] {
  const names = new Set<string>();
  for (const text of texts) {
    if (/approval/i.test(text)) for (const name of referencedApprovals(text)) names.add(name);
  }
  return [...names];
}

function taskApprovalReads(loaded: LoadedDefinition, taskName: string): string[] {
  let reads = readsByDefinition.get(loaded);
  if (!reads) {
    reads = new Map();
    readsByDefinition.set(loaded, reads);
  }
  let names = reads.get(taskName);
  if (names === undefined) {
    const task = loaded.tasks.get(taskName);
    const texts: string[] = [];
    forEachString(task?.parameters, [], (_, text) => texts.push(text));
    if (task?.executionCondition) texts.push(task.executionCondition.expression);
    names = approvalReads(texts);
    reads.set(taskName, names);
  }
  return names;
}

/** The approval part of a scope: the decisions `names` read; `''` is `ownTask`'s own. */
export async function decisionScope(
  db: Kysely<Database>,
  executionId: string,
  names: readonly string[],
  ownTask?: string,
): Promise<Pick<ExpressionScope, 'approvals' | 'approval'>> {
  if (names.length === 0) return {};
  const tasks = names.map((name) => (name === '' ? ownTask : name));
  const wanted = tasks.filter((name): name is string => name !== undefined);
  const approvals = await decisionsByTask(db, executionId, wanted);
  return {
    approvals,
    ...(ownTask !== undefined && names.includes('')
      ? { approval: approvals[ownTask] ?? null }
      : {}),
  };
}

/** The approval part of a task's scope. */
export function taskDecisionScope(
  db: Kysely<Database>,
  loaded: LoadedDefinition,
  taskName: string,
): Promise<Pick<ExpressionScope, 'approvals' | 'approval'>> {
  return decisionScope(db, loaded.execution.id, taskApprovalReads(loaded, taskName), taskName);
}
