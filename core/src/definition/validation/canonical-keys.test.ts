import { describe, expect, it } from 'vitest';
import { canonicalizeKeys, findProperty } from './canonical-keys.js';

const schema = {
  type: 'object',
  properties: {
    Server: { type: 'object', properties: { Port: { type: 'integer' } } },
    tasks: { type: 'array', items: { $ref: '#/$defs/Task' } },
    variables: { type: 'object' },
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
    expect(result.knownKeysAt).toEqual(new Map([['/Extra', ['Server', 'tasks', 'variables']]]));
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
