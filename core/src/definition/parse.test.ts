import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDefinition } from './parse.js';
import { renderProblem } from './validation/problem.js';

/** The founding sample definition: both kinds of type, an approval, a condition, retries. */
const designSample = `{
  "name": "NightlyReport", "description": "...",
  "variables": { "region": "eu" },
  "configuration": { "degreeOfParallelism": 4, "timeoutMilliseconds": 600000,
                     "errorHandling": { "strategy": "Retry", "retryPolicy": { "maxRetries": 3 } } },
  "tasks": [
    { "name": "Fetch", "type": { "plugin": "Net/Http", "version": "1.0.0" },
      "parameters": { "url": "https://example.test/data", "method": "GET" } },
    { "name": "Approve", "type": "ops-approval", "dependencies": ["Fetch"],
      "manualApproval": { "enabled": true, "comment": "Check the numbers" } },
    { "name": "Store", "type": "reports-bucket", "dependencies": ["Approve"],
      "parameters": { "path": "reports/$[Variables('region')].json", "data": "$[Outputs('Fetch').body]" },
      "executionCondition": { "expression": "Outputs('Fetch').status == 200" },
      "errorHandling": { "strategy": "Retry",
        "retryPolicy": { "maxRetries": 5, "backoffStrategy": "Exponential",
                         "initialDelayMilliseconds": 500, "maxDelayMilliseconds": 10000, "backoffCoefficient": 2 } },
      "timeoutMilliseconds": 30000 },
    { "name": "Alert", "type": { "plugin": "Net/Http" }, "runOnFailureOf": ["Store"] }
  ]
}`;

function errorsOf(definition: unknown): string[] {
  const result = parseDefinition(
    typeof definition === 'string' ? definition : JSON.stringify(definition),
  );
  if (result.ok) throw new Error('expected the definition to be rejected');
  return result.problems.map(renderProblem);
}

const task = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'cfg',
  ...extra,
});

describe('parseDefinition', () => {
  it('accepts the founding sample definition', () => {
    const result = parseDefinition(designSample);
    expect(result).toMatchObject({ ok: true });
    if (!result.ok) return;
    expect(result.definition.name).toBe('NightlyReport');
    expect(result.definition.tasks.map((t) => t.name)).toEqual([
      'Fetch',
      'Approve',
      'Store',
      'Alert',
    ]);
    expect(result.definition.tasks[2]?.errorHandling?.retryPolicy?.backoffStrategy).toBe(
      'Exponential',
    );
  });

  it('reads keys case-insensitively and returns them in canonical camelCase', () => {
    const result = parseDefinition(
      JSON.stringify({
        Name: 'W',
        TASKS: [
          {
            NAME: 'A',
            Type: { PLUGIN: 'Net/Http', Version: '1.0.0', Specifications: { BaseUrl: 'x' } },
            ErrorHandling: {
              Strategy: 'Retry',
              RetryPolicy: { MaxRetries: 2, BACKOFFSTRATEGY: 'Fixed' },
            },
            ExecutionCondition: { Expression: 'true' },
            ManualApproval: { Enabled: false },
            Parameters: { URL: "$[Variables('Region')]", Nested: { KeepMe: 1 } },
          },
          { name: 'B', type: 'cfg', DEPENDENCIES: ['A'], RunOnFailureOf: [] },
        ],
        Variables: { Region: 'eu' },
        Configuration: { DegreeOfParallelism: 2, ErrorHandling: { STRATEGY: 'Skip' } },
      }),
    );
    expect(result).toEqual({
      ok: true,
      definition: {
        name: 'W',
        tasks: [
          {
            name: 'A',
            type: { plugin: 'Net/Http', version: '1.0.0', specifications: { BaseUrl: 'x' } },
            errorHandling: {
              strategy: 'Retry',
              retryPolicy: { maxRetries: 2, backoffStrategy: 'Fixed' },
            },
            executionCondition: { expression: 'true' },
            manualApproval: { enabled: false },
            // User data keeps its keys exactly as written.
            parameters: { URL: "$[Variables('Region')]", Nested: { KeepMe: 1 } },
          },
          { name: 'B', type: 'cfg', dependencies: ['A'], runOnFailureOf: [] },
        ],
        variables: { Region: 'eu' },
        configuration: { degreeOfParallelism: 2, errorHandling: { strategy: 'Skip' } },
      },
    });
  });

  it('reads the keys of input declarations in any case, the inputs’ names as written', () => {
    const result = parseDefinition(
      JSON.stringify({
        name: 'W',
        Inputs: { Who: { TYPE: 'string', Required: false, Default: 'x' } },
        tasks: [task('A')],
      }),
    );
    expect(result.ok && result.definition.inputs).toEqual({
      Who: { type: 'string', required: false, default: 'x' },
    });
  });

  it('rejects a key given twice in different spellings', () => {
    expect(errorsOf({ name: 'W', Name: 'V', tasks: [task('A')] })).toEqual([
      "name: given twice, as 'name' and 'Name' (keys are case-insensitive)",
    ]);
  });

  it('reports JSON syntax errors with their position', () => {
    expect(errorsOf('{\n  "name": "W",\n  "tasks": [,]\n}')).toEqual([
      'definition is not valid JSON: value expected at line 3, column 13 (position 29)',
    ]);
    expect(errorsOf('')).toEqual([
      'definition is not valid JSON: value expected at line 1, column 1 (position 0)',
    ]);
    expect(errorsOf('{"name": "W", // no comments in JSON\n "tasks": []}')).toEqual([
      'definition is not valid JSON: invalid comment token at line 1, column 15 (position 14)',
    ]);
    expect(errorsOf('{"name": "W", "tasks": [],}')).toEqual([
      'definition is not valid JSON: property name expected at line 1, column 27 (position 26)',
    ]);
  });

  it('requires an object with a name and at least one task', () => {
    expect(errorsOf('[]')).toEqual(['definition: must be an object']);
    expect(errorsOf({})).toEqual(['name: is required', 'tasks: is required']);
    expect(errorsOf({ name: '', tasks: [] })).toEqual([
      'name: must not be empty',
      'tasks: must not be empty',
    ]);
    expect(errorsOf({ name: 'W', tasks: [{}] })).toEqual([
      'tasks[0]: must have type or workflow',
      'tasks[0].name: is required',
    ]);
  });

  it('names every bad field with its path, each in its own message', () => {
    const errors = errorsOf({
      name: 'W',
      tasks: [
        task('A'),
        task('B'),
        task('C', {
          errorHandling: {
            strategy: 'Ignore',
            retryPolicy: { maxRetries: -1, backoffStrategy: 'Random', backoffCoefficient: 0.5 },
          },
          timeoutMilliseconds: 0,
        }),
      ],
      configuration: { degreeOfParallelism: 0, timeoutMilliseconds: -5 },
    });
    expect(errors).toEqual([
      'configuration.degreeOfParallelism: must be >= 1',
      'configuration.timeoutMilliseconds: must be >= 1',
      'tasks[2].errorHandling.strategy: must be one of Abort, Retry, Skip, TriggerTask',
      'tasks[2].errorHandling.retryPolicy.maxRetries: must be >= 0',
      'tasks[2].errorHandling.retryPolicy.backoffStrategy: must be one of Fixed, Linear, Exponential, Jitter',
      'tasks[2].errorHandling.retryPolicy.backoffCoefficient: must be >= 1',
      'tasks[2].timeoutMilliseconds: must be >= 1',
    ]);
  });

  it('rejects negative delays and fractional counts', () => {
    expect(
      errorsOf({
        name: 'W',
        tasks: [
          task('A', {
            errorHandling: {
              strategy: 'Retry',
              retryPolicy: {
                maxRetries: 1.5,
                initialDelayMilliseconds: -1,
                maxDelayMilliseconds: -2,
              },
            },
          }),
        ],
      }),
    ).toEqual([
      'tasks[0].errorHandling.retryPolicy.maxRetries: must be an integer',
      'tasks[0].errorHandling.retryPolicy.initialDelayMilliseconds: must be >= 0',
      'tasks[0].errorHandling.retryPolicy.maxDelayMilliseconds: must be >= 0',
    ]);
  });

  it('explains a bad task type once, for the form that was given', () => {
    expect(errorsOf({ name: 'W', tasks: [task('A', { type: 5 })] })).toEqual([
      'tasks[0].type: must be a string or an object',
    ]);
    expect(errorsOf({ name: 'W', tasks: [task('A', { type: '' })] })).toEqual([
      'tasks[0].type: must not be empty',
    ]);
    expect(errorsOf({ name: 'W', tasks: [task('A', { type: { version: '1.0.0' } })] })).toEqual([
      'tasks[0].type.plugin: is required',
    ]);
    expect(errorsOf({ name: 'W', tasks: [task('A', { type: { plugin: 'Http' } })] })).toEqual([
      'tasks[0].type.plugin: must match the pattern ^[^/\\s\\u0000]+/[^/\\s\\u0000]+$',
    ]);
  });

  it('rejects unknown properties and lists the known ones', () => {
    expect(errorsOf({ name: 'W', tasks: [task('A', { dependsOn: [] })], __proto__x: 1 })).toEqual([
      'tasks[0].dependsOn: is not a known property (known: name, description, type, workflow, inputs, dependencies, runOnFailureOf, parameters, executionCondition, errorHandling, timeoutMilliseconds, manualApproval, forEach)',
      '__proto__x: is not a known property (known: name, description, variables, inputs, outputs, configuration, tasks, tests, $schema)',
    ]);
  });

  it('keeps a __proto__ key as data and rejects it', () => {
    const errors = errorsOf(
      '{"name":"W","tasks":[{"name":"A","type":"c"}],"__proto__":{"polluted":1}}',
    );
    expect(errors).toEqual([expect.stringMatching(/^__proto__: is not a known property/)]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('rejects task names over 200 characters', () => {
    expect(errorsOf({ name: 'W', tasks: [task('x'.repeat(201))] })).toEqual([
      'tasks[0].name: must be at most 200 characters',
    ]);
  });

  it('takes an approval timeout only with the decision to take then', () => {
    const gate = (manualApproval: Record<string, unknown>) => ({
      name: 'W',
      tasks: [task('A', { manualApproval: { enabled: true, ...manualApproval } })],
    });
    const accepted = parseDefinition(
      JSON.stringify(gate({ TimeoutMilliseconds: 60_000, onTimeout: 'Reject' })),
    );
    expect(accepted).toMatchObject({
      ok: true,
      definition: {
        tasks: [
          { manualApproval: { enabled: true, timeoutMilliseconds: 60_000, onTimeout: 'Reject' } },
        ],
      },
    });
    expect(errorsOf(gate({ timeoutMilliseconds: 1000 }))).toEqual([
      'tasks[0].manualApproval.onTimeout: is required with timeoutMilliseconds (Approve or Reject: the decision taken when no one decides in time)',
    ]);
    expect(errorsOf(gate({ onTimeout: 'Approve' }))).toEqual([
      'tasks[0].manualApproval.timeoutMilliseconds: is required with onTimeout',
    ]);
    expect(errorsOf(gate({ timeoutMilliseconds: 0, onTimeout: 'Later' }))).toEqual([
      'tasks[0].manualApproval.timeoutMilliseconds: must be >= 1',
      'tasks[0].manualApproval.onTimeout: must be one of Approve, Reject',
    ]);
    expect(errorsOf(gate({ timeoutMilliseconds: '1 hour', onTimeout: 'Approve' }))).toEqual([
      'tasks[0].manualApproval.timeoutMilliseconds: must be an integer',
    ]);
  });

  it('runs the graph checks after the schema passes', () => {
    expect(
      errorsOf({
        name: 'W',
        tasks: [task('A', { dependencies: ['B'] }), task('B', { dependencies: ['A'] })],
      }),
    ).toEqual(['cycle: A → B → A']);
  });

  it('caps the number of messages', () => {
    const tasks = Array.from({ length: 80 }, (_, i) => task(`T${i}`, { timeoutMilliseconds: -1 }));
    const errors = errorsOf({ name: 'W', tasks });
    expect(errors).toHaveLength(51);
    expect(errors.at(-1)).toBe('... and 30 more problems');
  });
});

describe('parseDefinition on arbitrary input', () => {
  it('never throws: any text or JSON value gives a result', () => {
    const shapes = fc.oneof(
      fc.string(),
      fc.jsonValue().map((value) => JSON.stringify(value)),
      // Near-valid definitions, where the deeper checks run.
      fc
        .record({
          name: fc.string(),
          tasks: fc.array(
            fc.record({
              name: fc.constantFrom('A', 'B', 'C', ''),
              type: fc.oneof(fc.string(), fc.record({ plugin: fc.string() })),
              dependencies: fc.array(fc.constantFrom('A', 'B', 'C', 'D')),
              runOnFailureOf: fc.array(fc.constantFrom('A', 'B', 'C')),
              parameters: fc.dictionary(
                fc.string(),
                fc.string().map((text) => `$[${text}]`),
              ),
              executionCondition: fc.record({ expression: fc.string() }),
            }),
          ),
        })
        .map((value) => JSON.stringify(value)),
    );
    fc.assert(
      fc.property(shapes, (text) => {
        const result = parseDefinition(text);
        expect(typeof result.ok).toBe('boolean');
        if (!result.ok) expect(result.problems.length).toBeGreaterThan(0);
      }),
      { numRuns: 500 },
    );
  });
});
