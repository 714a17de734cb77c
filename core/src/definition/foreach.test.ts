import { describe, expect, it } from 'vitest';
import { checkGraph as checkGraphProblems } from './dag.js';
import { checkExpression, checkTemplate } from './expressions/check.js';
import {
  evaluateCondition,
  evaluateWrapped,
  ExpressionError,
  resolveValue,
  type ExpressionScope,
} from './expressions/evaluate.js';
import { referencedItemFunctions } from './expressions/references.js';
import { checkForEachTasks as checkForEachTasksProblems, itemTaskName } from './foreach.js';
import type { TaskDefinition, WorkflowDefinition } from './types.js';
import { renderProblem } from './validation/problem.js';

/** What a user reads of each problem. */
const checkGraph = (...args: Parameters<typeof checkGraphProblems>) =>
  checkGraphProblems(...args).map(renderProblem);
const checkForEachTasks = (...args: Parameters<typeof checkForEachTasksProblems>) =>
  checkForEachTasksProblems(...args).map(renderProblem);

const item: ExpressionScope = {
  outputs: { List: { ids: ['a', 'b'] } },
  variables: { prefix: 'x-' },
  item: { value: { id: 7, tags: ['t'] }, index: 3 },
};

describe('Item() and Index()', () => {
  it('read the item and its index, raw or interpolated', () => {
    expect(
      resolveValue(
        {
          whole: '$[Item()]',
          id: '$[Item().id]',
          tag: '$[Item().tags[0]]',
          at: '$[Index()]',
          text: "$[Variables('prefix')]$[Item().id]-$[Index() + 1]",
        },
        item,
      ),
    ).toEqual({ whole: { id: 7, tags: ['t'] }, id: 7, tag: 't', at: 3, text: 'x-7-4' });
    expect(evaluateCondition('Index() % 2 == 1 && Item().id > 5', item)).toBe(true);
    expect(evaluateCondition('$[index() == 0]', item)).toBe(false);
  });

  it('read a null item as null', () => {
    expect(resolveValue('$[Item()]', { ...item, item: { value: null, index: 0 } })).toBeNull();
  });

  it('fail to evaluate outside an item', () => {
    const { item: _, ...plain } = item;
    expect(() => resolveValue('$[Item()]', plain)).toThrow(ExpressionError);
    expect(() => resolveValue('$[Index()]', plain)).toThrow(
      "Index() has a value only in a run of a forEach task's item in $[Index()]",
    );
  });

  it('take no arguments and must be called', () => {
    expect(checkTemplate("$[Item('x')]")).toBe("Item() takes no arguments in $[Item('x')]");
    expect(checkExpression('Index')).toBe('Index must be called: Index() in $[Index]');
    expect(checkExpression('Other()')).toMatch(/Item\(\) and Index\(\) can be called/);
  });

  it('are found in templates and conditions', () => {
    expect(referencedItemFunctions("$[Item().id] at $[Index()] of $[Outputs('A')]")).toEqual([
      'Item',
      'Index',
    ]);
    expect(referencedItemFunctions('Index() > 2')).toEqual(['Index']);
    expect(referencedItemFunctions("$[Outputs('A')]")).toEqual([]);
    expect(referencedItemFunctions('$[broken(')).toEqual([]);
  });
});

describe('evaluateWrapped (forEach.items)', () => {
  it('yields the raw value of a bare or wrapped expression', () => {
    expect(evaluateWrapped("Outputs('List').ids", item)).toEqual(['a', 'b']);
    expect(evaluateWrapped("$[Outputs('List').ids]", item)).toEqual(['a', 'b']);
    expect(evaluateWrapped('[1, 2, 3]', item)).toEqual([1, 2, 3]);
    expect(evaluateWrapped("Outputs('Missing')", item)).toBeNull();
  });

  it('refuses text around the expression', () => {
    expect(() => evaluateWrapped("ids: $[Outputs('List').ids]", item)).toThrow(ExpressionError);
  });
});

const task = (name: string, extra: Partial<TaskDefinition> = {}): TaskDefinition => ({
  name,
  type: 'cfg',
  ...extra,
});
const workflow = (...tasks: TaskDefinition[]): WorkflowDefinition => ({ name: 'W', tasks });

describe('definition checks of forEach tasks', () => {
  it('accepts Item() and Index() in a forEach task and items read from other tasks', () => {
    expect(
      checkGraph(
        workflow(
          task('List'),
          task('Each', {
            dependencies: ['List'],
            forEach: { items: "Outputs('List').ids", parallelism: 5 },
            parameters: { id: '$[Item()]', n: '$[Index()]' },
            executionCondition: { expression: 'Index() < 10' },
          }),
        ),
      ),
    ).toEqual([]);
  });

  it('refuses them anywhere else, naming the place', () => {
    expect(
      checkGraph({
        ...workflow(
          task('Plain', { parameters: { deep: [{ id: '$[Item().id]' }] } }),
          task('Each', { forEach: { items: 'Index()' } }),
        ),
        outputs: { last: '$[Index()]' },
      }),
    ).toEqual([
      "tasks[0].parameters.deep[0].id: Item() is valid only in a forEach task's parameters and executionCondition",
      "tasks[1].forEach.items: Index() is valid only in a forEach task's parameters and executionCondition",
      "outputs.last: Index() is valid only in a forEach task's parameters and executionCondition",
    ]);
  });

  it('checks the items expression like any other', () => {
    expect(
      checkGraph(
        workflow(
          task('A', { forEach: { items: "Outputs('A')" } }),
          task('B', { forEach: { items: 'a b' } }),
        ),
      ),
    ).toEqual([
      "tasks[0].forEach.items: task 'A' cannot read its own output",
      expect.stringMatching(/^tasks\[1\]\.forEach\.items: /),
    ]);
  });

  it('refuses an approval on a forEach task and tasks named like its items', () => {
    expect(
      checkForEachTasks(
        workflow(
          task('Each', { forEach: { items: '[1]' }, manualApproval: { enabled: true } }),
          task('Each[0]'),
          task('Other[0]'),
          task('Each[x]'),
        ),
      ),
    ).toEqual([
      'tasks[0].forEach: a forEach task cannot also have manualApproval enabled',
      "tasks[1].name: 'Each[0]' is the name of an item of forEach task 'Each'",
    ]);
    expect(checkForEachTasks(workflow(task('A[0]')))).toEqual([]);
  });

  it('refuses forEach on a task that runs a workflow', () => {
    const calling = {
      name: 'Call',
      workflow: '3f0c8f5e-2b1d-4c1e-9a7b-5d6e7f8a9b0c',
      forEach: { items: '[1, 2]' },
    } as TaskDefinition;
    expect(checkForEachTasks(workflow(calling))).toEqual([
      'tasks[0].forEach: a task that runs a workflow cannot have forEach (run forEach inside the called workflow instead)',
    ]);
  });

  it('names items after their task', () => {
    expect(itemTaskName('Each', 12)).toBe('Each[12]');
  });
});
