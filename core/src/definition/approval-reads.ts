/**
 * Checks of what a definition's expressions read of approvals, and of the approvals' own
 * declarations: `Approval('Task')` names a task that asks for an approval, `Approval()` is read
 * only by a task that asks for one (and not by its condition, checked before it is asked), and
 * the defaults of `manualApproval.inputs` have their declared types. Pure, like dag.ts.
 */
import { forEachString } from './json-strings.js';
import { referencedApprovals } from './expressions/references.js';
import { checkInputDeclarations } from './inputs.js';
import { problemIn, type PathSegment } from './location.js';
import type { Problem } from './validation/problem.js';
import type { TaskDefinition, WorkflowDefinition } from './types.js';

/** Every problem of the definition's approval reads and approval inputs, each naming where. */
export function checkApprovalReads(definition: WorkflowDefinition): Problem[] {
  const gated = new Map(
    definition.tasks.map((task) => [task.name, task.manualApproval?.enabled === true]),
  );
  const problems: Problem[] = [];
  const check = (path: PathSegment[], text: string, task: TaskDefinition | undefined) => {
    if (!/approval/i.test(text)) return;
    for (const name of referencedApprovals(text)) {
      if (name === '') {
        if (task === undefined) {
          problems.push(
            problemIn(
              path,
              `Approval() reads a task's own approval; name one here: Approval('Task')`,
            ),
          );
        } else if (task.manualApproval?.enabled !== true) {
          problems.push(
            problemIn(
              path,
              `Approval() reads the task's own approval, and task '${task.name}' asks for none (manualApproval.enabled)`,
            ),
          );
        } else if (path.includes('executionCondition')) {
          problems.push(
            problemIn(
              path,
              `Approval() is not decided yet when the condition is checked (before the approval is asked for)`,
            ),
          );
        }
      } else if (!gated.has(name)) {
        problems.push(problemIn(path, `Approval('${name}') names no task`));
      } else if (!gated.get(name)) {
        problems.push(
          problemIn(
            path,
            `Approval('${name}') names a task that asks for no approval (manualApproval.enabled)`,
          ),
        );
      }
    }
  };
  definition.tasks.forEach((task, index) => {
    const condition = task.executionCondition?.expression;
    if (condition !== undefined)
      check(['tasks', index, 'executionCondition', 'expression'], condition, task);
    forEachString(task.parameters, ['tasks', index, 'parameters'], (path, text) =>
      check(path, text, task),
    );
    if (task.manualApproval?.inputs !== undefined) {
      problems.push(
        ...checkInputDeclarations(task.manualApproval, [
          'tasks',
          index,
          'manualApproval',
          'inputs',
        ]),
      );
    }
  });
  for (const [name, text] of Object.entries(definition.outputs ?? {})) {
    check(['outputs', name], text, undefined);
  }
  return problems;
}
