import { describe, expect, it } from 'vitest';
import { resolveValue } from './expressions/evaluate.js';
import { defaultDefinitionLimits, maxSupportedDepth, type DefinitionLimits } from './limits.js';
import { parseDefinition } from './parse.js';
import { renderProblem } from './validation/problem.js';

const limits = (changes: Partial<DefinitionLimits> = {}): DefinitionLimits => ({
  ...defaultDefinitionLimits,
  ...changes,
});

/** A one-task definition's text whose parameters are the JSON text `parameters`. */
const withParameters = (parameters: string, name = 'W') =>
  `{"name":${JSON.stringify(name)},"tasks":[{"name":"A","type":"cfg","parameters":${parameters}}]}`;

/** `levels` objects nested, `{"a":{"a":...bottom}}`, as JSON text. */
const nested = (levels: number, bottom = '1') =>
  `${'{"a":'.repeat(levels)}${bottom}${'}'.repeat(levels)}`;

function errorsOf(text: string, within = limits()): string[] {
  const result = parseDefinition(text, within);
  if (result.ok) throw new Error('expected the definition to be rejected');
  return result.problems.map(renderProblem);
}

describe('definition limits', () => {
  it('accepts nesting up to Definitions.MaxDepth and refuses one level more, naming the place', () => {
    // definition → tasks → [0] → parameters: the parameters object is the fourth level.
    const within = limits({ MaxDepth: 10 });
    expect(parseDefinition(withParameters(nested(7)), within).ok).toBe(true);
    expect(errorsOf(withParameters(nested(8)), within)).toEqual([
      `tasks[0].parameters${'.a'.repeat(7)}: nests deeper than 10 levels (Definitions.MaxDepth)`,
    ]);
  });

  it('refuses any depth without exhausting the stack, arrays included', () => {
    for (const text of [
      withParameters(nested(100_000)),
      withParameters(`{"list":${'['.repeat(200_000)}${']'.repeat(200_000)}}`),
    ]) {
      expect(errorsOf(text).join()).toMatch(/Definitions\.MaxDepth/);
    }
  });

  it('refuses text PostgreSQL cannot store, in keys and strings, naming each place', () => {
    expect(
      errorsOf(
        `{"name":"W\\u0000","tasks":[{"name":"A","type":"cfg","parameters":{"k\\ud800":"v","x":["\\u0000"]}}]}`,
      ),
    ).toEqual([
      'name: contains a NUL character (\\u0000), which cannot be stored',
      'tasks[0].parameters["k\\ud800"]: the key contains an unpaired UTF-16 surrogate (\\ud800), which cannot be stored',
      'tasks[0].parameters.x[0]: contains a NUL character (\\u0000), which cannot be stored',
    ]);
  });

  it('bounds the text, string and name lengths, the tasks and the dependencies', () => {
    const text = withParameters(`{"s":"${'x'.repeat(301)}"}`);
    expect(errorsOf(text, limits({ MaxBytes: 300 }))).toEqual([
      `definition: is ${text.length} bytes long, over the limit of 300 (Definitions.MaxBytes)`,
    ]);
    expect(errorsOf(text, limits({ MaxStringLength: 300 }))).toEqual([
      'tasks[0].parameters.s: is 301 characters long, over the limit of 300 (Definitions.MaxStringLength)',
    ]);
    expect(errorsOf(withParameters('{}', 'Long name'), limits({ MaxNameLength: 4 }))).toEqual([
      'name: is 9 characters long, over the limit of 4 (Definitions.MaxNameLength)',
    ]);
    const tasks = ['A', 'B', 'C'].map((name, i) => ({
      name,
      type: 'cfg',
      dependencies: i === 0 ? [] : ['A'],
      runOnFailureOf: i === 2 ? ['B'] : [],
    }));
    const graph = JSON.stringify({ name: 'W', tasks });
    expect(parseDefinition(graph, limits({ MaxTasks: 3, MaxDependencies: 3 })).ok).toBe(true);
    expect(errorsOf(graph, limits({ MaxTasks: 2, MaxDependencies: 2 }))).toEqual([
      'tasks: has 3 tasks, over the limit of 2 (Definitions.MaxTasks)',
      'tasks: have 3 dependencies and runOnFailureOf entries in all, over the limit of 2 (Definitions.MaxDependencies)',
    ]);
  });

  it('bounds how deeply expressions nest, however they nest', () => {
    const at = (expression: string) => withParameters(JSON.stringify({ e: `$[${expression}]` }));
    const within = limits({ MaxDepth: 10 });
    const chain = (count: number) => `Variables('v')${'.x'.repeat(count)}`;
    expect(parseDefinition(at(chain(8)), within).ok).toBe(true); // 8 members, call, literal
    expect(errorsOf(at(chain(9)), within).join()).toMatch(
      /nests 11 levels deep, over the limit of 10 \(Definitions\.MaxDepth\)/,
    );
    for (const deep of ['1+'.repeat(30_000) + '1', '('.repeat(30_000) + '1' + ')'.repeat(30_000)]) {
      expect(errorsOf(at(deep)).join()).toMatch(/nests/);
    }
  });

  it('resolves what the deepest allowed definition holds without exhausting the stack', () => {
    const within = limits({ MaxDepth: maxSupportedDepth });
    const expression = `Variables('v')${'.x'.repeat(maxSupportedDepth - 2)}`;
    let bottom: unknown = 'found';
    for (let i = 0; i < maxSupportedDepth - 2; i++) bottom = { x: bottom };
    const text = withParameters(nested(maxSupportedDepth - 4, JSON.stringify(`$[${expression}]`)));
    const result = parseDefinition(text, within);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    let resolved = resolveValue(result.definition.tasks[0]!.parameters, {
      outputs: {},
      variables: { v: bottom },
    });
    for (let i = 0; i < maxSupportedDepth - 4; i++) resolved = (resolved as { a: unknown }).a;
    expect(resolved).toBe('found');
  });
});
