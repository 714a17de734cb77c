/**
 * Checks of a schema-valid definition that JSON Schema cannot express: task names are unique,
 * every reference names a task, the graph has no cycle, and expressions parse and read only
 * outputs of tasks that exist. Pure: the engine may run these inside workflow code too.
 */
import { checkExpression, checkOutputExpression, checkTemplate } from './expressions/check.js';
import {
  referencedInputs,
  referencedItemFunctions,
  referencedTasks,
} from './expressions/references.js';
import { checkConcurrency } from './concurrency.js';
import { checkForEachTasks } from './foreach.js';
import { checkApprovalReads } from './approval-reads.js';
import { checkInputDeclarations } from './inputs.js';
import { forEachString } from './json-strings.js';
import { formatPath, problemIn, type PathSegment } from './location.js';
import { didYouMean, suggestionsFor } from './suggestions.js';
import { problemAt, withSuggestions, type Problem } from './validation/problem.js';
import type { ErrorHandling, TaskDefinition, WorkflowDefinition } from './types.js';

/**
 * Every graph and expression problem of the definition, each naming where it is; expressions
 * nest at most `maxExpressionDepth` deep.
 */
export function checkGraph(definition: WorkflowDefinition, maxExpressionDepth?: number): Problem[] {
  const problems: Problem[] = [];
  const names = new Map<string, number>();
  definition.tasks.forEach((task, index) => {
    const first = names.get(task.name);
    if (first === undefined) names.set(task.name, index);
    else {
      problems.push(
        problemIn(
          ['tasks', index, 'name'],
          `duplicate task name '${task.name}' (also tasks[${first}])`,
        ),
      );
    }
  });

  const unknownTask = (name: string, at: string): Problem | null => {
    if (names.has(name)) return null;
    const near = suggestionsFor(name, names.keys());
    return withSuggestions(problemAt(at, `unknown task '${name}'${didYouMean(near)}`), near);
  };

  definition.tasks.forEach((task, index) => {
    const at = (...segments: PathSegment[]) => formatPath(['tasks', index, ...segments]);
    const references: Array<[keyof TaskDefinition, string[] | undefined, string]> = [
      ['dependencies', task.dependencies, 'cannot depend on itself'],
      ['runOnFailureOf', task.runOnFailureOf, 'cannot run on its own failure'],
    ];
    for (const [field, targets, selfProblem] of references) {
      targets?.forEach((target, i) => {
        const problem =
          target === task.name
            ? problemAt(at(field, i), `task '${task.name}' ${selfProblem}`)
            : unknownTask(target, at(field, i));
        if (problem !== null) problems.push(problem);
      });
    }
    problems.push(
      ...checkErrorHandling(task.errorHandling, ['tasks', index], unknownTask, task.name),
    );
    problems.push(...checkApprovalTimeout(task, index));
    problems.push(
      ...checkTaskExpressions(task, index, names, maxExpressionDepth, definition.inputs ?? {}),
    );
  });
  problems.push(
    ...checkErrorHandling(definition.configuration?.errorHandling, ['configuration'], unknownTask),
  );
  problems.push(...checkInputDeclarations(definition));
  problems.push(...checkConcurrency(definition));
  problems.push(...checkForEachTasks(definition));
  problems.push(...checkApprovalReads(definition));
  for (const [name, text] of Object.entries(definition.outputs ?? {})) {
    const path = ['outputs', name];
    const problem = checkOutputExpression(text);
    if (problem !== null) problems.push(problemIn(path, `${problem}`));
    else problems.push(...readProblems(path, text, names, definition.inputs ?? {}));
  }

  for (const cycle of findCycles(definition)) {
    problems.push(problemAt(undefined, `cycle: ${[...cycle, cycle[0]].join(' → ')}`));
  }
  return problems;
}

function checkErrorHandling(
  handling: ErrorHandling | undefined,
  path: PathSegment[],
  unknownTask: (name: string, at: string) => Problem | null,
  taskName?: string,
): Problem[] {
  if (handling === undefined) return [];
  const at = formatPath([...path, 'errorHandling', 'triggerTask']);
  if (handling.triggerTask === undefined) {
    return handling.strategy === 'TriggerTask'
      ? [problemAt(at, 'is required with strategy TriggerTask', 'validation.required')]
      : [];
  }
  if (handling.triggerTask === taskName)
    return [problemAt(at, `task '${taskName}' cannot trigger itself`)];
  const problem = unknownTask(handling.triggerTask, at);
  return problem === null ? [] : [problem];
}

/** An approval times out only with both a timeout and the decision to take then. */
function checkApprovalTimeout(task: TaskDefinition, index: number): Problem[] {
  const approval = task.manualApproval;
  if (approval === undefined) return [];
  const at = (field: string) => formatPath(['tasks', index, 'manualApproval', field]);
  if (approval.timeoutMilliseconds !== undefined && approval.onTimeout === undefined) {
    return [
      problemAt(
        at('onTimeout'),
        'is required with timeoutMilliseconds (Approve or Reject: the decision taken when no one decides in time)',
        'validation.required',
      ),
    ];
  }
  if (approval.onTimeout !== undefined && approval.timeoutMilliseconds === undefined) {
    return [
      problemAt(at('timeoutMilliseconds'), 'is required with onTimeout', 'validation.required'),
    ];
  }
  return [];
}

function checkTaskExpressions(
  task: TaskDefinition,
  index: number,
  names: ReadonlyMap<string, number>,
  maxDepth: number | undefined,
  inputs: object,
): Problem[] {
  const problems: Problem[] = [];
  const checkReads = (path: PathSegment[], text: string, item = task.forEach !== undefined) => {
    problems.push(...readProblems(path, text, names, inputs, task.name, item));
  };

  const items = task.forEach?.items;
  if (items !== undefined) {
    const path = ['tasks', index, 'forEach', 'items'];
    const problem = checkExpression(items, maxDepth);
    if (problem !== null) problems.push(problemIn(path, `${problem}`));
    else checkReads(path, items, false);
  }

  const condition = task.executionCondition?.expression;
  if (condition !== undefined) {
    const path = ['tasks', index, 'executionCondition', 'expression'];
    const problem = checkExpression(condition, maxDepth);
    if (problem !== null) problems.push(problemIn(path, `${problem}`));
    else checkReads(path, condition);
  }
  // A subworkflow's `inputs` hold expressions as a plugin's `parameters` do.
  for (const field of ['parameters', 'inputs'] as const) {
    forEachString(task[field], ['tasks', index, field], (path, text) => {
      if (!text.includes('$[')) return;
      const problem = checkTemplate(text, maxDepth);
      if (problem !== null) problems.push(problemIn(path, `${problem}`));
      else checkReads(path, text);
    });
  }
  return problems;
}

/**
 * What an expression reads that does not exist: undeclared inputs, unknown tasks, itself, an
 * item outside a forEach task's parameters and condition (`item` false).
 */
function readProblems(
  path: PathSegment[],
  text: string,
  names: ReadonlyMap<string, number>,
  inputs: object,
  self?: string,
  item = false,
): Problem[] {
  const problems: Problem[] = [];
  if (!item) {
    for (const name of referencedItemFunctions(text)) {
      problems.push(
        problemIn(
          path,
          `${name}() is valid only in a forEach task's parameters and executionCondition`,
        ),
      );
    }
  }
  for (const name of referencedInputs(text)) {
    if (!Object.hasOwn(inputs, name)) {
      const near = suggestionsFor(name, Object.keys(inputs));
      const message = `Inputs('${name}') names no declared input${didYouMean(near)}`;
      problems.push(withSuggestions(problemIn(path, message), near));
    }
  }
  for (const name of referencedTasks(text)) {
    if (name === self) {
      problems.push(problemIn(path, `task '${name}' cannot read its own output`));
    } else if (!names.has(name)) {
      const near = suggestionsFor(name, names.keys());
      const message = `Outputs('${name}') names no task${didYouMean(near)}`;
      problems.push(withSuggestions(problemIn(path, message), near));
    }
  }
  return problems;
}

/** What the graph of a definition is made of: each task's name and the tasks it waits for. */
export interface TaskGraph {
  tasks: readonly Pick<TaskDefinition, 'name' | 'dependencies' | 'runOnFailureOf'>[];
}

/**
 * Edges run from a task to the tasks that wait for it (through `dependencies` or
 * `runOnFailureOf`), in definition order. Unknown and self references are left out: they are
 * reported on their own.
 */
function successors(definition: TaskGraph): Map<string, string[]> {
  const edges = new Map<string, string[]>(definition.tasks.map((task) => [task.name, []]));
  for (const task of definition.tasks) {
    for (const before of [...(task.dependencies ?? []), ...(task.runOnFailureOf ?? [])]) {
      const next = edges.get(before);
      if (next !== undefined && before !== task.name && !next.includes(task.name)) {
        next.push(task.name);
      }
    }
  }
  return edges;
}

/** Tasks ordered so that each comes after every task it waits for; nodes on cycles are left out. */
function kahnOrder(edges: Map<string, string[]>): string[] {
  const waiting = new Map<string, number>([...edges.keys()].map((name) => [name, 0]));
  for (const next of edges.values()) {
    for (const name of next) waiting.set(name, (waiting.get(name) ?? 0) + 1);
  }
  const order = [...waiting].filter(([, count]) => count === 0).map(([name]) => name);
  for (let i = 0; i < order.length; i++) {
    for (const next of edges.get(order[i] as string) ?? []) {
      const left = (waiting.get(next) ?? 0) - 1;
      waiting.set(next, left);
      if (left === 0) order.push(next);
    }
  }
  return order;
}

/**
 * The task names in an order where every task follows the tasks it waits for (dependencies and
 * runOnFailureOf), ties kept in definition order. Throws on a cycle; `checkGraph` reports it.
 */
export function topologicalOrder(definition: WorkflowDefinition): string[] {
  const edges = successors(definition);
  const order = kahnOrder(edges);
  if (order.length < edges.size) {
    throw new Error(`the workflow '${definition.name}' has a cycle`);
  }
  return order;
}

/**
 * Cycles of the graph, each as its tasks in run order starting from the one defined first: none
 * for a DAG, at least one otherwise (cycles that share tasks are reported once). Linear-ish and
 * iterative, so very large definitions neither take long nor overflow the stack.
 */
export function findCycles(definition: TaskGraph): string[][] {
  const edges = successors(definition);
  const acyclic = new Set(kahnOrder(edges));
  // What Kahn's pass leaves are the tasks on cycles and the tasks downstream of them.
  const downstream = new Set([...edges.keys()].filter((name) => !acyclic.has(name)));
  // The same pass against the edges leaves cycles only; what remains are the tasks on cycles.
  const backwards = new Map<string, string[]>([...downstream].map((name) => [name, []]));
  for (const name of downstream) {
    for (const next of edges.get(name) ?? []) backwards.get(next)?.push(name);
  }
  const tails = new Set(kahnOrder(backwards));
  const remaining = new Set([...downstream].filter((name) => !tails.has(name)));
  const forward = (name: string) => (edges.get(name) ?? []).filter((next) => remaining.has(next));

  const cycles: string[][] = [];
  const visited = new Set<string>();
  for (const start of remaining) {
    if (visited.has(start)) continue;
    const walk: string[] = [];
    let current: string | undefined = start;
    // Every remaining task has a way forward inside `remaining`, so the walk meets itself or an
    // earlier walk.
    while (current !== undefined && !visited.has(current)) {
      visited.add(current);
      walk.push(current);
      current = forward(current)[0];
    }
    const from = current === undefined ? -1 : walk.indexOf(current);
    if (from !== -1) cycles.push(rotateToFirstDefined(walk.slice(from), definition));
  }
  return cycles;
}

function rotateToFirstDefined(cycle: string[], definition: TaskGraph): string[] {
  const position = new Map(definition.tasks.map((task, i) => [task.name, i]));
  const first = cycle.reduce(
    (best, name, i) =>
      (position.get(name) ?? 0) < (position.get(cycle[best] as string) ?? 0) ? i : best,
    0,
  );
  return [...cycle.slice(first), ...cycle.slice(0, first)];
}

/**
 * A task and every task that waits for it, directly or not (through `dependencies` or
 * `runOnFailureOf`): what a rerun from that task runs again.
 */
export function downstreamOf(definition: WorkflowDefinition, name: string): Set<string> {
  const edges = successors(definition);
  const found = new Set([name]);
  for (const current of found) {
    for (const next of edges.get(current) ?? []) found.add(next);
  }
  return found;
}
