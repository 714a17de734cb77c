import { describe, expect, it } from 'vitest';
import schema from '../../generated/workflow-definition.schema.json' with { type: 'json' };
import { definitionChecker } from './validation.js';

const check = definitionChecker(schema);

const text = (value: unknown) => JSON.stringify(value, null, 2);
const task = (name: string, extra: object = {}) => ({
  name,
  type: { plugin: 'Flow/Log' },
  parameters: { message: name },
  ...extra,
});

describe('definitionChecker', () => {
  it('finds nothing wrong with a valid definition, keys in any case included', () => {
    expect(
      check(text({ name: 'Ok', tasks: [task('A'), task('B', { dependencies: ['A'] })] })),
    ).toEqual([]);
    expect(
      check(
        text({
          Name: 'Ok',
          TASKS: [{ Name: 'A', Type: { Plugin: 'Flow/Log' }, ManualApproval: { Enabled: true } }],
        }),
      ),
    ).toEqual([]);
  });

  it('says where the JSON breaks', () => {
    expect(check('{\n  "name": "x",\n  "tasks": [\n}')).toEqual([
      { path: '', message: 'Not valid JSON: value expected.', line: 4, column: 1 },
    ]);
    expect(check('[]')).toEqual([
      { path: '', message: 'A definition is a JSON object.', line: 1, column: 1 },
    ]);
  });

  it('reports schema problems at their path and line, unknown keys once, as written', () => {
    const source = text({
      name: 'x',
      Tasks: [
        { name: 'A', type: { plugin: 'Flow/Log' }, bogus: 1, manualApproval: { enabled: 'yes' } },
        { name: 'B' },
      ],
      configuration: { degreeOfParallelism: 0 },
    });
    const lineOf = (needle: string) =>
      source.split('\n').findIndex((line) => line.includes(needle)) + 1;
    const problems = check(source);
    expect(problems.map(({ path, message, line }) => ({ path, message, line }))).toEqual(
      expect.arrayContaining([
        { path: 'Tasks[0].bogus', message: 'is not a known property', line: lineOf('"bogus"') },
        {
          path: 'Tasks[0].manualApproval.enabled',
          message: 'must be a boolean, not a string',
          line: lineOf('"enabled"'),
        },
        { path: 'Tasks[1]', message: 'needs "type"', line: lineOf('"name": "B"') - 1 },
        {
          path: 'configuration.degreeOfParallelism',
          message: '0 is less than 1',
          line: lineOf('"degreeOfParallelism"'),
        },
      ]),
    );
    // A known key whose value failed is not also called unknown.
    expect(
      problems.filter((problem) => problem.message === 'is not a known property'),
    ).toHaveLength(1);
  });

  it('checks the graph: unique names, edges to tasks that exist, no cycle', () => {
    const problems = check(
      text({
        name: 'g',
        tasks: [
          task('A', { dependencies: ['C'] }),
          task('B', { dependencies: ['A'], runOnFailureOf: ['Nope'] }),
          task('C', {
            dependencies: ['B'],
            errorHandling: { strategy: 'TriggerTask', triggerTask: 'Gone' },
          }),
          task('A'),
        ],
      }),
    );
    expect(problems.map(({ path, message }) => `${path}: ${message}`)).toEqual([
      'tasks[3].name: repeats the name "A" of tasks[0]',
      'tasks[1].runOnFailureOf[0]: names no task: "Nope"',
      'tasks[2].errorHandling.triggerTask: names no task: "Gone"',
      'tasks[1].dependencies: is part of a cycle: B → C → A → B',
    ]);
  });
});
