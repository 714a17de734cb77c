import { describe, expect, it } from 'vitest';
import {
  checkGraph as checkGraphProblems,
  downstreamOf,
  findCycles,
  topologicalOrder,
} from './dag.js';
import type { TaskDefinition, WorkflowDefinition } from './types.js';
import { renderProblem } from './validation/problem.js';

/** What a user reads of each problem. */
const checkGraph = (...args: Parameters<typeof checkGraphProblems>) =>
  checkGraphProblems(...args).map(renderProblem);

const task = (name: string, extra: Partial<TaskDefinition> = {}): TaskDefinition => ({
  name,
  type: 'cfg',
  ...extra,
});
const workflow = (...tasks: TaskDefinition[]): WorkflowDefinition => ({ name: 'W', tasks });

describe('checkGraph', () => {
  it('accepts a diamond', () => {
    const diamond = workflow(
      task('A'),
      task('B', { dependencies: ['A'] }),
      task('C', { dependencies: ['A'] }),
      task('D', {
        dependencies: ['B', 'C'],
        parameters: { x: "$[Outputs('B')] $[Outputs('C').y]" },
      }),
    );
    expect(checkGraph(diamond)).toEqual([]);
    expect(topologicalOrder(diamond)).toEqual(['A', 'B', 'C', 'D']);
  });

  it('reports duplicate task names', () => {
    expect(checkGraph(workflow(task('A'), task('B'), task('A')))).toEqual([
      "tasks[2].name: duplicate task name 'A' (also tasks[0])",
    ]);
  });

  it('suggests the task or input a misspelled name may have meant, as data too', () => {
    const problems = checkGraphProblems({
      name: 'W',
      inputs: { region: { type: 'string' } },
      tasks: [
        task('Fetch'),
        task('Parse', {
          dependencies: ['Fecth'],
          parameters: { a: "$[Outputs('Fetc').body]", b: "$[Inputs('regoin')]" },
        }),
      ],
    });
    expect(problems).toEqual([
      {
        code: 'validation.invalid',
        path: 'tasks[1].dependencies[0]',
        message: "unknown task 'Fecth' (did you mean 'Fetch'?)",
        suggestions: ['Fetch'],
      },
      expect.objectContaining({
        message: "Outputs('Fetc') names no task (did you mean 'Fetch'?)",
        suggestions: ['Fetch'],
      }),
      expect.objectContaining({
        message: "Inputs('regoin') names no declared input (did you mean 'region'?)",
        suggestions: ['region'],
      }),
    ]);
  });

  it('reports unknown dependencies, failure handlers and trigger targets', () => {
    const problems = checkGraph(
      workflow(
        task('Fetch'),
        task('B', {
          dependencies: ['Fetch', 'fetch', 'Nope'],
          runOnFailureOf: ['Gone'],
          errorHandling: { strategy: 'TriggerTask', triggerTask: 'Missing' },
        }),
      ),
    );
    expect(problems).toEqual([
      "tasks[1].dependencies[1]: unknown task 'fetch' (did you mean 'Fetch'?)",
      "tasks[1].dependencies[2]: unknown task 'Nope'",
      "tasks[1].runOnFailureOf[0]: unknown task 'Gone'",
      "tasks[1].errorHandling.triggerTask: unknown task 'Missing'",
    ]);
  });

  it('checks the workflow-wide error handling too', () => {
    const definition: WorkflowDefinition = {
      ...workflow(task('A')),
      configuration: { errorHandling: { strategy: 'TriggerTask' } },
    };
    expect(checkGraph(definition)).toEqual([
      'configuration.errorHandling.triggerTask: is required with strategy TriggerTask',
    ]);
  });

  it('reports a task that depends on, fails into or triggers itself', () => {
    expect(
      checkGraph(
        workflow(
          task('A', {
            dependencies: ['A'],
            runOnFailureOf: ['A'],
            errorHandling: { strategy: 'TriggerTask', triggerTask: 'A' },
          }),
        ),
      ),
    ).toEqual([
      "tasks[0].dependencies[0]: task 'A' cannot depend on itself",
      "tasks[0].runOnFailureOf[0]: task 'A' cannot run on its own failure",
      "tasks[0].errorHandling.triggerTask: task 'A' cannot trigger itself",
    ]);
  });

  it('names the tasks on a cycle, through dependencies and runOnFailureOf', () => {
    const definition = workflow(
      task('Start'),
      task('A', { dependencies: ['Start', 'C'] }),
      task('B', { dependencies: ['A'] }),
      task('C', { runOnFailureOf: ['B'] }),
      task('After', { dependencies: ['C'] }),
    );
    expect(checkGraph(definition)).toEqual(['cycle: A → B → C → A']);
    expect(() => topologicalOrder(definition)).toThrow(/cycle/);
  });

  it('reports each separate cycle', () => {
    const definition = workflow(
      task('X', { dependencies: ['Y'] }),
      task('Y', { dependencies: ['X'] }),
      task('P', { dependencies: ['R'] }),
      task('Q', { dependencies: ['P'] }),
      task('R', { dependencies: ['Q'] }),
    );
    expect(findCycles(definition)).toEqual([
      ['X', 'Y'],
      ['P', 'Q', 'R'],
    ]);
  });

  it('handles a long chain without recursion limits', () => {
    const tasks = Array.from({ length: 20_000 }, (_, i) =>
      task(`T${i}`, i === 0 ? {} : { dependencies: [`T${i - 1}`] }),
    );
    expect(checkGraph(workflow(...tasks))).toEqual([]);
    tasks[0] = task('T0', { dependencies: ['T19999'] });
    expect(findCycles(workflow(...tasks))[0]).toHaveLength(20_000);
  });

  it('finds a cycle with a long tail downstream quickly', () => {
    const tail = Array.from({ length: 20_000 }, (_, i) =>
      task(`T${i}`, { dependencies: [i === 0 ? 'B' : `T${i - 1}`] }),
    ).reverse();
    const definition = workflow(
      ...tail,
      task('A', { dependencies: ['B'] }),
      task('B', { dependencies: ['A'] }),
    );
    const started = Date.now();
    expect(checkGraph(definition)).toEqual(['cycle: A → B → A']);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('reports unparsable conditions and parameter expressions with their paths', () => {
    const problems = checkGraph(
      workflow(
        task('A', {
          executionCondition: { expression: "Outputs('A'" },
          parameters: { list: ['ok', { deep: 'x $[1 +] y' }], plain: 'no [expressions] here' },
        }),
      ),
    );
    expect(problems).toEqual([
      expect.stringMatching(
        /^tasks\[0\]\.executionCondition\.expression: cannot parse \$\[Outputs\('A'\]/,
      ),
      expect.stringMatching(/^tasks\[0\]\.parameters\.list\[1\]\.deep: cannot parse \$\[1 \+\]/),
    ]);
  });

  it('reports Outputs of tasks that do not exist, or of the task itself', () => {
    const problems = checkGraph(
      workflow(
        task('A'),
        task('B', {
          executionCondition: { expression: "$[Outputs('Ghost').ok]" },
          parameters: { mine: "$[Outputs('B')]", theirs: "$[Outputs('A')]" },
        }),
      ),
    );
    expect(problems).toEqual([
      "tasks[1].executionCondition.expression: Outputs('Ghost') names no task",
      "tasks[1].parameters.mine: task 'B' cannot read its own output",
    ]);
  });

  it('checks the expressions of outputs like those of tasks', () => {
    const problems = checkGraph({
      ...workflow(task('A')),
      outputs: {
        fine: "Outputs('A').x + 1",
        text: "A gave $[Outputs('A')]",
        ghost: "Outputs('Ghost')",
        broken: "Outputs('A'",
      },
    });
    expect(problems).toEqual([
      "outputs.ghost: Outputs('Ghost') names no task",
      expect.stringMatching(/^outputs\.broken: cannot parse \$\[Outputs\('A'\]/),
    ]);
  });

  it('reports Inputs that the definition does not declare, and defaults of the wrong type', () => {
    const problems = checkGraph({
      ...workflow(
        task('A', { parameters: { ok: "$[Inputs('region')]", bad: "$[Inputs('nope')]" } }),
      ),
      inputs: { region: { type: 'string', default: 5 } },
    });
    expect(problems).toEqual([
      "tasks[0].parameters.bad: Inputs('nope') names no declared input",
      'inputs.region.default: must be a string, not the number 5',
    ]);
  });
});

describe('downstreamOf', () => {
  it('finds the task and all that wait for it, through dependencies and failure handlers', () => {
    const definition = workflow(
      task('Load'),
      task('Clean', { dependencies: ['Load'] }),
      task('Report', { dependencies: ['Clean'] }),
      task('Alert', { runOnFailureOf: ['Report'] }),
      task('Other'),
    );
    expect([...downstreamOf(definition, 'Clean')].sort()).toEqual(['Alert', 'Clean', 'Report']);
    expect([...downstreamOf(definition, 'Other')]).toEqual(['Other']);
  });
});

describe('topologicalOrder', () => {
  it('puts every task after what it waits for, ties in definition order', () => {
    const definition = workflow(
      task('Report', { dependencies: ['Load', 'Clean'] }),
      task('Alert', { runOnFailureOf: ['Report'] }),
      task('Clean', { dependencies: ['Load'] }),
      task('Load'),
      task('Other'),
    );
    expect(topologicalOrder(definition)).toEqual(['Load', 'Other', 'Clean', 'Report', 'Alert']);
  });
});
