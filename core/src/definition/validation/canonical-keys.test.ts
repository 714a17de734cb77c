import { describe, expect, it } from 'vitest';
import { canonicalizeKeys, findProperty, writtenPath } from './canonical-keys.js';

const schema = {
  type: 'object',
  properties: {
    Server: { type: 'object', properties: { Port: { type: 'integer' } } },
    tasks: { type: 'array', items: { $ref: '#/$defs/Task' } },
    variables: { type: 'object' },
    inputs: { type: 'object', unevaluatedProperties: { $ref: '#/$defs/Input' } },
  },
  $defs: {
    Task: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        type: { anyOf: [{ type: 'string' }, { $ref: '#/$defs/Plugin' }] },
      },
    },
    Plugin: { type: 'object', properties: { plugin: { type: 'string' } } },
    Input: { type: 'object', properties: { type: { type: 'string' } } },
    'Acme.Plot@1.0.0': {
      type: 'object',
      properties: { at: { $ref: '#/$defs/Acme.Plot@1.0.0/definitions/point' } },
      definitions: { point: { type: 'object', properties: { x: { type: 'number' } } } },
    },
  },
};

describe('canonicalizeKeys', () => {
  it('renames known keys to the schema’s spelling through arrays, refs and unions', () => {
    const input = {
      server: { PORT: 1 },
      TASKS: [
        { Name: 'A', TYPE: { Plugin: 'Net/Http' } },
        { name: 'B', type: 'cfg' },
      ],
    };
    expect(canonicalizeKeys(input, schema).value).toEqual({
      Server: { Port: 1 },
      tasks: [
        { name: 'A', type: { plugin: 'Net/Http' } },
        { name: 'B', type: 'cfg' },
      ],
    });
  });

  it('leaves free-form objects and unknown keys exactly as written, and says what is known', () => {
    const variables = { Region: 'eu', nested: { Key: 1 } };
    const result = canonicalizeKeys({ Variables: variables, Extra: { X: 1 } }, schema);
    expect(result.value).toEqual({ variables, Extra: { X: 1 } });
    expect(result.knownKeysAt).toEqual(
      new Map([['/Extra', ['Server', 'tasks', 'variables', 'inputs']]]),
    );
  });

  it('renames the keys of a map’s values, the map’s own keys kept as written', () => {
    const result = canonicalizeKeys({ Inputs: { Who: { TYPE: 'string' } } }, schema);
    expect(result.value).toEqual({ inputs: { Who: { type: 'string' } } });
  });

  it('follows references to any place in the schema, as the served schema’s plugin parts have', () => {
    const plot = { $ref: '#/$defs/Acme.Plot@1.0.0' };
    expect(canonicalizeKeys({ AT: { X: 1 } }, { ...schema, ...plot }).value).toEqual({
      at: { x: 1 },
    });
  });

  it('says how each renamed key was written, so that a place can be shown as written', () => {
    const result = canonicalizeKeys({ TASKS: [{ Name: 'A', type: 'cfg' }] }, schema);
    expect(result.writtenAs).toEqual(
      new Map([
        ['/tasks', 'TASKS'],
        ['/tasks/0/name', 'Name'],
      ]),
    );
    expect(writtenPath(result.writtenAs, ['tasks', 0, 'name'])).toEqual(['TASKS', 0, 'Name']);
    expect(writtenPath(result.writtenAs, ['tasks', 0, 'type'])).toEqual(['TASKS', 0, 'type']);
  });

  it('reports a key given twice in different spellings', () => {
    const result = canonicalizeKeys({ server: { port: 1, Port: 2 } }, schema);
    expect(result.problems).toEqual([
      {
        path: ['Server', 'Port'],
        problem: "given twice, as 'port' and 'Port' (keys are case-insensitive)",
      },
    ]);
  });

  it('drops undefined values and keeps a __proto__ key as data', () => {
    const input = JSON.parse('{"__proto__": {"polluted": 1}}') as Record<string, unknown>;
    const result = canonicalizeKeys({ ...input, Server: undefined }, schema);
    expect(Object.keys(result.value as object)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('findProperty', () => {
  it('finds a property in any case', () => {
    expect(findProperty(schema, 'SERVER')?.name).toBe('Server');
    expect(findProperty(schema, 'nope')).toBeUndefined();
  });
});
