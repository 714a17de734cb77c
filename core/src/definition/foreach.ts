/**
 * forEach tasks (README, "foreach"): the limits, how an item's entry in the task list is named,
 * and the checks of a definition's forEach tasks that the expression checks of `dag.ts` do not
 * make. Pure: the workflow code imports it too.
 */
import { problemIn } from './location.js';
import type { Problem } from './validation/problem.js';
import type { WorkflowDefinition } from './types.js';

/** The most items one forEach task runs (more fail the task when its items are evaluated). */
export const MAX_FOREACH_ITEMS = 10_000;

/** How many items run at once when `forEach.parallelism` is absent. */
export const DEFAULT_FOREACH_PARALLELISM = 10;

/** The name of an item's entry in the task list: `Task[3]`. */
export function itemTaskName(taskName: string, index: number): string {
  return `${taskName}[${index}]`;
}

/**
 * Problems of forEach tasks: one cannot also wait for an approval (the approval's condition would
 * need an item), and no task may be named like an item of one (`Task[3]`), since the items' task
 * list entries take those names.
 */
export function checkForEachTasks(definition: WorkflowDefinition): Problem[] {
  const problems: Problem[] = [];
  const looping = new Set(
    definition.tasks.filter((task) => task.forEach !== undefined).map((task) => task.name),
  );
  if (looping.size === 0) return problems;
  definition.tasks.forEach((task, index) => {
    if (task.forEach !== undefined && task.manualApproval?.enabled === true) {
      problems.push(
        problemIn(
          ['tasks', index, 'forEach'],
          `a forEach task cannot also have manualApproval enabled`,
        ),
      );
    }
    if (task.forEach !== undefined && task.workflow !== undefined) {
      problems.push(
        problemIn(
          ['tasks', index, 'forEach'],
          `a task that runs a workflow cannot have forEach (run forEach inside the called workflow instead)`,
        ),
      );
    }
    const item = /^(.*)\[\d+\]$/s.exec(task.name);
    if (item !== null && looping.has(item[1]!)) {
      problems.push(
        problemIn(
          ['tasks', index, 'name'],
          `'${task.name}' is the name of an item of forEach task '${item[1]}'`,
        ),
      );
    }
  });
  return problems;
}
