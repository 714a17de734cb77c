import { describe, expect, it } from 'vitest';
import schema from '../../generated/workflow-definition.schema.json' with { type: 'json' };
import { typedDefinitionSchema } from '../../core/src/definition/typed-schema.js';
import { definitionChecker, placedProblem } from './validation.js';

const check = definitionChecker(schema);

const taskKeys = Object.keys(schema.$defs.TaskDefinition.properties).join(', ');
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
      {
        path: '',
        message: 'Not valid JSON: value expected.',
        line: 4,
        column: 1,
        from: 30,
        to: 31,
      },
    ]);
    expect(check('[]')).toEqual([
      { path: '', message: 'A definition is a JSON object.', line: 1, column: 1, from: 0, to: 2 },
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
        {
          path: 'Tasks[0].bogus',
          message: `is not a known property (known: ${taskKeys})`,
          line: lineOf('"bogus"'),
        },
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
      problems.filter((problem) => problem.message.startsWith('is not a known property')),
    ).toHaveLength(1);
  });

  it('reports a key given twice in two spellings as the server does, at the first', () => {
    const source = text({ name: 'x', Name: 'y', tasks: [task('A')] });
    expect(check(source)).toEqual([
      {
        path: 'name',
        message: "given twice, as 'name' and 'Name' (keys are case-insensitive)",
        line: 2,
        column: 3,
        from: source.indexOf('"name"'),
        to: source.indexOf('"name"') + 6,
      },
    ]);
  });

  it('suggests the task a misspelled dependency may have meant', () => {
    const problems = check(
      text({ name: 'g', tasks: [task('Wait'), task('Done', { dependencies: ['Wiat'] })] }),
    );
    expect(problems.map(({ path, message }) => `${path}: ${message}`)).toEqual([
      'tasks[1].dependencies[0]: names no task: "Wiat" (did you mean "Wait"?)',
    ]);
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

  it('checks parameters by the served schema’s plugin schemas, their keys as written', () => {
    const served = typedDefinitionSchema([
      {
        type: 'Net/Http',
        version: '1.0.0',
        parametersSchema: {
          type: 'object',
          required: ['url'],
          additionalProperties: false,
          properties: { url: { type: 'string' } },
        },
      },
    ]);
    const checkServed = definitionChecker(served);
    const definition = (parameters: object) =>
      text({
        name: 'x',
        Tasks: [{ Name: 'A', TYPE: { Plugin: 'Net/Http' }, Parameters: parameters }],
      });
    expect(checkServed(definition({ url: 'https://example.com' }))).toEqual([]);
    // Parameters are the plugin's data: their keys are not renamed, here as on the server.
    expect(
      checkServed(definition({ URL: 'https://example.com' })).map(
        ({ path, message }) => `${path}: ${message}`,
      ),
    ).toEqual([
      'Tasks[0].Parameters: needs "url"',
      "Tasks[0].Parameters.URL: unknown parameter 'URL' of Net/Http (did you mean 'url'?)",
    ]);
  });

  describe('with the plugins a server installed', () => {
    const delay = {
      type: 'Flow/Delay',
      version: '1.0.0',
      parametersSchema: {
        type: 'object',
        required: ['milliseconds'],
        additionalProperties: false,
        properties: { milliseconds: { type: 'integer', description: 'How long to wait.' } },
      },
    };
    const log = { ...delay, type: 'Flow/Log', parametersSchema: { type: 'object' } };
    const checkServed = definitionChecker(typedDefinitionSchema([delay, log]));
    const said = (source: string) =>
      checkServed(source).map(({ path, message }) => `${path}: ${message}`);

    it('says a plugin is not installed, with the installed one it may mean, at its name', () => {
      const source = text({ name: 'x', tasks: [{ name: 'A', type: { plugin: 'Flow/Lgo' } }] });
      const problems = checkServed(source);
      expect(said(source)).toEqual([
        "tasks[0].type.plugin: unknown plugin 'Flow/Lgo' (did you mean 'Flow/Log'?)",
      ]);
      expect(source.slice(problems[0]?.from, problems[0]?.to)).toBe('"Flow/Lgo"');
      expect(
        said(text({ name: 'x', tasks: [{ name: 'A', type: { plugin: 'flow/log' } }] })),
      ).toEqual([]);
    });

    it('names an unknown parameter with its plugin and the parameter it may mean', () => {
      const source = text({
        name: 'x',
        tasks: [{ name: 'A', type: { plugin: 'Flow/Delay' }, parameters: { milisecond: 5 } }],
      });
      const unknown = checkServed(source).find((problem) => problem.message.startsWith('unknown'));
      expect(source.slice(unknown?.from, unknown?.to)).toBe('"milisecond"');
      expect(said(source)).toEqual([
        'tasks[0].parameters: needs "milliseconds"',
        "tasks[0].parameters.milisecond: unknown parameter 'milisecond' of Flow/Delay (did you mean 'milliseconds'?)",
      ]);
    });
  });
});

describe('placedProblem', () => {
  const source = text({ name: 'x', tasks: [{ name: 'A', type: 'NoSuchConfiguration' }] });
  const at = (needle: string) => ({
    from: source.indexOf(needle),
    to: source.indexOf(needle) + needle.length,
  });

  it('places a server’s problem by its path, under the request’s body or not', () => {
    for (const path of ['tasks[0].type', 'body.definition.tasks[0].type']) {
      expect(placedProblem(source, path, 'no such configuration')).toEqual({
        path: 'tasks[0].type',
        message: 'no such configuration',
        line: 6,
        column: 7,
        ...at('"NoSuchConfiguration"'),
      });
    }
  });

  it('places a path the text lacks at the deepest part it has, and leaves one without a path', () => {
    expect(placedProblem(source, 'tasks[0]["not here"]', 'm')).toMatchObject({
      path: 'tasks[0]["not here"]',
      line: 4,
      from: source.indexOf('{', 1),
      to: source.indexOf('{', 1) + 1,
    });
    expect(placedProblem(source, undefined, 'm')).toMatchObject({ line: null, from: 0, to: 0 });
    expect(placedProblem(source, 'tasks[', 'm')).toMatchObject({ line: null });
  });
});
