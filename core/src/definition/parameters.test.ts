import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { JsonSchema, PluginManifest } from '@trellis/plugin-kit';
import {
  acceptingExpressions,
  checkTaskParameters as checkTaskParametersProblems,
  parameterProblems,
} from './parameters.js';
import type { TaskType, WorkflowDefinition } from './types.js';
import { renderProblem } from './validation/problem.js';

/** What a user reads of each problem. */
const checkTaskParameters = async (...args: Parameters<typeof checkTaskParametersProblems>) =>
  (await checkTaskParametersProblems(...args)).map(renderProblem);

/** A built-in's parameters schema, as installed. */
function builtIn(folder: string): JsonSchema {
  const file = new URL(`../../../plugins/${folder}/plugin.json`, import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as PluginManifest).parameters!;
}

const schemas: Record<string, JsonSchema> = {
  'Data/Json': builtIn('data-json'),
  'Net/Http': builtIn('net-http'),
  'Data/Csv': builtIn('data-csv'),
};

/** Plugins by type, and one configuration (`sums`) on Data/Json; anything else is unknown. */
const lookup = async (type: TaskType) =>
  typeof type === 'string'
    ? type === 'sums'
      ? schemas['Data/Json']
      : undefined
    : schemas[type.plugin];

describe('checkTaskParameters', () => {
  it('names the task and the parameter: unknown, missing, wrong type, not allowed value', async () => {
    const definition: WorkflowDefinition = {
      name: 'W',
      tasks: [
        {
          name: 'Sum',
          type: { plugin: 'Data/Json' },
          parameters: { data: [1, 2], expression: '$sum($)' },
        },
        { name: 'Fetch', type: { plugin: 'Net/Http' } },
        {
          name: 'Post',
          type: { plugin: 'Net/Http' },
          parameters: { url: 'https://x.test', timeoutMilliseconds: 'soon', responseType: 'xml' },
        },
      ],
    };
    expect(await checkTaskParameters(definition, lookup)).toEqual([
      'tasks[0] "Sum": parameter "data" is not allowed',
      'tasks[1] "Fetch": parameter "url" is required',
      'tasks[2] "Post": parameter "timeoutMilliseconds" must be integer',
      'tasks[2] "Post": parameter "responseType" must be one of "auto", "json", "text"',
    ]);
  });

  it('uses the plugin of a task named by configuration, and skips unknown plugins', async () => {
    const definition: WorkflowDefinition = {
      name: 'W',
      tasks: [
        { name: 'Sum', type: 'sums', parameters: { expresion: '$sum($)' } },
        { name: 'Zip', type: { plugin: 'Compression/Zip' }, parameters: { anything: 1 } },
        { name: 'Elsewhere', type: 'unknown-configuration', parameters: { anything: 1 } },
      ],
    };
    expect(await checkTaskParameters(definition, lookup)).toEqual([
      'tasks[0] "Sum": parameter "expression" is required',
      'tasks[0] "Sum": parameter "expresion" is not allowed',
    ]);
  });

  it('accepts an expression, or a string holding one, wherever a value is typed', async () => {
    const definition: WorkflowDefinition = {
      name: 'W',
      tasks: [
        {
          name: 'Post',
          type: { plugin: 'Net/Http' },
          parameters: {
            url: 'https://x.test/$[Variables("path")]',
            method: "$[Variables('method')]",
            timeoutMilliseconds: "$[Outputs('Config').timeout]",
            failOnHttpError: "$[Variables('strict')]",
            headers: "$[Outputs('Login').headers]",
            query: { page: "$[Outputs('Prev').next]", tags: 'a' },
            allowedStatusCodes: [404, "$[Variables('also')]"],
          },
        },
        {
          name: 'Csv',
          type: { plugin: 'Data/Csv' },
          parameters: { operation: "$[Variables('op')]", rows: "$[Outputs('Post').body]" },
        },
      ],
    };
    expect(await checkTaskParameters(definition, lookup)).toEqual([]);
  });

  it('still checks literal values next to expressions, and plain strings stay strings', () => {
    expect(
      parameterProblems(schemas['Net/Http']!, {
        url: "$[Outputs('A').url]",
        query: { page: { nested: true } },
        allowedStatusCodes: ['404'],
        method: 'not a method',
      }),
    ).toEqual([
      'parameter "method" must match pattern "^[A-Za-z]+$"',
      'parameter "query.page" must be string, number, boolean or array',
      'parameter "allowedStatusCodes.0" must be integer',
    ]);
  });

  it('does not change the parameters it checks (the runner fills defaults, not the definition)', async () => {
    const parameters = { url: 'https://x.test' };
    expect(parameterProblems(schemas['Net/Http']!, parameters)).toEqual([]);
    expect(parameters).toEqual({ url: 'https://x.test' });
  });
});

describe('acceptingExpressions', () => {
  it('widens nested values, definitions and tuple items, but not the value itself, `not` or `if`', () => {
    const expression = expect.objectContaining({ type: 'string', pattern: '\\$\\[' });
    const widened = acceptingExpressions({
      type: 'object',
      properties: {
        n: { type: 'integer', description: 'A number' },
        any: { description: 'Anything' },
        ref: { $ref: '#/definitions/point' },
      },
      definitions: { point: { type: 'object', properties: { x: { type: 'number' } } } },
      not: { required: ['forbidden'] },
      if: { properties: { n: { const: 1 } } },
      then: { properties: { tuple: { items: [{ type: 'string' }, { type: 'boolean' }] } } },
    });
    expect(widened).toMatchObject({
      type: 'object',
      properties: {
        n: { description: 'A number', anyOf: [{ type: 'integer' }, expression] },
        any: { description: 'Anything' },
        ref: { anyOf: [{ $ref: '#/definitions/point' }, expression] },
      },
      definitions: {
        point: { properties: { x: { anyOf: [{ type: 'number' }, expression] } } },
      },
      not: { required: ['forbidden'] },
      if: { properties: { n: { const: 1 } } },
      then: {
        properties: {
          tuple: {
            anyOf: [
              {
                items: [
                  { anyOf: [{ type: 'string' }, expression] },
                  { anyOf: [{ type: 'boolean' }, expression] },
                ],
              },
              expression,
            ],
          },
        },
      },
    });
    expect(parameterProblems(widened, '$[whole]')).toContain('parameters must be object');
  });
});
