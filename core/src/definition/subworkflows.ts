/**
 * Subworkflow tasks (`workflow` instead of `type`): what a definition may say of them, and the
 * checks against the stored workflows they call: each must exist, and no workflow may call
 * itself, directly or through others. The lookups come from the caller (the repositories), so
 * this module has no database code of its own.
 */
import { formatPath, problemIn } from './location.js';
import { problemAt, type Problem } from './validation/problem.js';
import type { WorkflowDefinition } from './types.js';

/** A task of a definition that calls a workflow. */
export interface WorkflowCall {
  index: number;
  taskName: string;
  workflowId: string;
}

/** The tasks of a definition that call workflows, in definition order. */
export function workflowCalls(definition: Pick<WorkflowDefinition, 'tasks'>): WorkflowCall[] {
  return definition.tasks.flatMap((task, index) =>
    task.workflow === undefined
      ? []
      : [{ index, taskName: task.name, workflowId: task.workflow.toLowerCase() }],
  );
}

/**
 * Keys that belong to the other kind of task: `inputs` go with `workflow`, `parameters` with
 * `type`. (That a task has exactly one of `type` and `workflow` is the schema's to say.) An empty
 * map gives nothing, so it is no mistake: generated clients (openapi-generator's Java) send every
 * optional map, empty when unset.
 */
export function checkSubworkflowTasks(definition: WorkflowDefinition): Problem[] {
  const problems: Problem[] = [];
  const given = (values: Record<string, unknown> | undefined) =>
    values !== undefined && Object.keys(values).length > 0;
  definition.tasks.forEach((task, index) => {
    if (task.workflow !== undefined && given(task.parameters)) {
      problems.push(
        problemIn(
          ['tasks', index, 'parameters'],
          `a task with workflow takes inputs, not parameters`,
        ),
      );
    }
    if (task.workflow === undefined && given(task.inputs)) {
      problems.push(
        problemIn(
          ['tasks', index, 'inputs'],
          `only a task with workflow takes inputs (a plugin's task takes parameters)`,
        ),
      );
    }
  });
  return problems;
}

/** A stored workflow as the call checks see it. */
export interface CalledWorkflow {
  name: string;
  /** The workflows its current definition calls (none when it no longer parses). */
  calls: string[];
}

/** Finds stored workflows by id; undefined for one that does not exist. */
export type CalledWorkflowLookup = (workflowId: string) => Promise<CalledWorkflow | undefined>;

/**
 * One message per call of a workflow that does not exist, and one per call that closes a cycle
 * back to `self` (the stored workflow the definition is for; absent on add, when nothing can
 * call it yet), naming the cycle by workflow names: `A → B → A`.
 */
export async function checkWorkflowCalls(
  definition: WorkflowDefinition,
  self: { id: string } | undefined,
  lookup: CalledWorkflowLookup,
): Promise<Problem[]> {
  const known = new Map<string, Promise<CalledWorkflow | undefined>>();
  const find = (id: string) => {
    let answer = known.get(id);
    if (answer === undefined) {
      answer = lookup(id);
      known.set(id, answer);
    }
    return answer;
  };
  const selfId = self?.id.toLowerCase();
  const problems: Problem[] = [];
  for (const call of workflowCalls(definition)) {
    const at = formatPath(['tasks', call.index, 'workflow']);
    const called = await find(call.workflowId);
    if (selfId !== undefined && call.workflowId === selfId) {
      problems.push(
        problemAt(
          at,
          `task '${call.taskName}' calls its own workflow: ${definition.name} → ${definition.name}`,
        ),
      );
    } else if (called === undefined) {
      problems.push(
        problemAt(
          at,
          `task '${call.taskName}' calls workflow ${call.workflowId}, which does not exist`,
        ),
      );
    } else if (selfId !== undefined) {
      const path = await pathBack(call.workflowId, selfId, find);
      if (path !== null) {
        const names = [definition.name, ...path, definition.name];
        problems.push(
          problemAt(
            at,
            `task '${call.taskName}' closes a cycle of workflows calling each other: ${names.join(' → ')}`,
          ),
        );
      }
    }
  }
  return problems;
}

/**
 * The names of the workflows on a path of calls from `from` to `target` (target excluded), or
 * null when there is none. Depth-first; each workflow is visited once, so cycles elsewhere in
 * the stored workflows do not loop.
 */
async function pathBack(
  from: string,
  target: string,
  find: (id: string) => Promise<CalledWorkflow | undefined>,
): Promise<string[] | null> {
  const visited = new Set<string>();
  const walk = async (id: string): Promise<string[] | null> => {
    if (visited.has(id)) return null;
    visited.add(id);
    const workflow = await find(id);
    if (workflow === undefined) return null;
    for (const next of workflow.calls) {
      if (next === target) return [workflow.name];
      const rest = await walk(next);
      if (rest !== null) return [workflow.name, ...rest];
    }
    return null;
  };
  return walk(from);
}
