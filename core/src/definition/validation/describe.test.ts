import { describe, expect, it } from 'vitest';
import { createAjv } from './ajv.js';
import { canonicalizeKeys } from './canonical-keys.js';
import { describeProblems, describeValidationErrors, type MessageStyle } from './describe.js';

const ajv = createAjv('2020-12', { allErrors: true, strict: true, verbose: true });

/** The messages for a value that a schema rejects. */
function messages(schema: object, value: unknown, style?: MessageStyle): string[] {
  const validate = ajv.compile(schema);
  expect(validate(value)).toBe(false);
  return describeValidationErrors(validate.errors, style);
}

const closed = (properties: Record<string, object>, required: string[] = []) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

describe('describeValidationErrors', () => {
  it('names each place by its path and keeps Ajv’s words by default', () => {
    const schema = closed({
      port: { type: 'integer', maximum: 10 },
      items: { type: 'array', items: closed({ name: { type: 'string' } }, ['name']) },
    });
    expect(messages(schema, { port: 11, items: [{ name: 1 }, {}], extra: true })).toEqual([
      'extra: is not allowed',
      'port: must be <= 10',
      'items[0].name: must be string',
      'items[1].name: is required',
    ]);
    expect(messages({ type: 'object' }, [])).toEqual(['(root): must be object']);
  });

  it('quotes a key that is not an identifier, so that it is not read as nested keys', () => {
    const schema = closed({ a: closed({}) });
    expect(messages(schema, { 'a.b': 1, a: { b: 1 } })).toEqual([
      '["a.b"]: is not allowed',
      'a.b: is not allowed',
    ]);
  });

  it('lists allowed values as JSON or as written', () => {
    const schema = { enum: ['Abort', 'Retry'] };
    expect(messages(schema, 'x')).toEqual(['(root): must be one of "Abort", "Retry"']);
    expect(messages(schema, 'x', { values: 'plain' })).toEqual([
      '(root): must be one of Abort, Retry',
    ]);
  });

  it('rewords type, length and pattern problems for people when asked', () => {
    const schema = closed({
      count: { type: 'integer' },
      name: { type: 'string', minLength: 1, maxLength: 3 },
      tags: { type: 'array', minItems: 2 },
      plugin: { type: 'string', pattern: '^\\w+/\\w+$' },
    });
    const value = { count: 'x', name: '', tags: [], plugin: 'Http' };
    expect(messages(schema, value)).toEqual([
      'count: must be integer',
      'name: must NOT have fewer than 1 characters',
      'tags: must NOT have fewer than 2 items',
      'plugin: must match pattern "^\\w+/\\w+$"',
    ]);
    expect(messages(schema, { ...value, name: 'long' }, { wording: 'people' })).toEqual([
      'count: must be an integer',
      'name: must be at most 3 characters',
      'tags: must have at least 2 items',
      'plugin: must match the pattern ^\\w+/\\w+$',
    ]);
    expect(messages(schema, value, { wording: 'people' })).toContain('name: must not be empty');
  });

  it('names the shape a pattern stands for when its schema describes it', () => {
    const schema = closed({
      address: { type: 'string', pattern: ':\\d+$', description: 'host:port' },
    });
    expect(messages(schema, { address: 'x' }, { patternDescriptions: true })).toEqual([
      'address: must be host:port',
    ]);
  });

  it('tells an unknown key in the caller’s words, with the keys known there', () => {
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, tasks: { type: 'array' } },
      unevaluatedProperties: { not: {} },
    };
    const value = { Name: 'W', tsks: [] };
    const { value: canonical, knownKeysAt } = canonicalizeKeys(value, schema);
    expect(messages(schema, canonical, { unknownKey: 'unknown key' })).toEqual([
      'tsks: unknown key',
    ]);
    expect(
      messages(schema, canonical, { unknownKey: 'is not a known property', knownKeysAt }),
    ).toEqual(['tsks: is not a known property (known: name, tasks)']);
  });

  it('explains a union once, for the branch the value was meant for', () => {
    const schema = closed({
      type: {
        anyOf: [
          { type: 'string', minLength: 1 },
          closed({ plugin: { type: 'string' } }, ['plugin']),
        ],
      },
    });
    const people: MessageStyle = { wording: 'people' };
    expect(messages(schema, { type: 5 }, people)).toEqual(['type: must be a string or an object']);
    expect(messages(schema, { type: 5 })).toEqual(['type: must be string or object']);
    expect(messages(schema, { type: '' }, people)).toEqual(['type: must not be empty']);
    expect(messages(schema, { type: {} }, people)).toEqual(['type.plugin: is required']);
  });

  it('explains a oneOf of a string and an object as such a union (a definition as text or object)', () => {
    const schema = closed({
      definition: {
        oneOf: [{ type: 'string', minLength: 1 }, closed({ name: { type: 'string' } }, ['name'])],
      },
    });
    expect(messages(schema, { definition: {} })).toEqual(['definition.name: is required']);
    expect(messages(schema, { definition: '' })).toEqual([
      'definition: must NOT have fewer than 1 characters',
    ]);
    expect(messages(schema, { definition: 5 })).toEqual(['definition: must be string or object']);
    const both = { oneOf: [{ type: 'string' }, { type: 'string', minLength: 1 }] };
    expect(messages(both, 'x')).toEqual(['(root): must match exactly one schema in oneOf']);
  });

  it('explains a union by a discriminator with the branch its key picks, or the values it takes', () => {
    // One object in every branch, as a dereferenced `$ref` is: Ajv compiles it once and reports
    // its errors under the first branch's path.
    const status = { enum: ['On', 'Off'] };
    const branch = (kind: string, properties: object) =>
      closed(
        {
          kind: { type: 'string', enum: [kind] },
          status,
          settings: { type: 'object', properties },
        },
        ['kind', 'status', 'settings'],
      );
    const schema = {
      oneOf: [
        branch('Plain', {}),
        branch('Timed', { every: { type: 'string', pattern: '^[0-9]+s$' } }),
        branch('Hook', { secret: { type: 'string' } }),
      ],
    };
    expect(messages(schema, { kind: 'Timed', status: 'On', settings: { every: '1m' } })).toEqual([
      'settings.every: must match pattern "^[0-9]+s$"',
    ]);
    expect(messages(schema, { kind: 'Plain', status: 'Up', settings: {} })).toEqual([
      'status: must be one of "On", "Off"',
    ]);
    expect(messages(schema, { kind: 'Hook', status: 'Up', settings: { every: 1 } })).toEqual([
      'status: must be one of "On", "Off"',
    ]);
    expect(messages(schema, { kind: 'Daily', status: 'Up', settings: 'x' })).toEqual([
      'kind: must be one of "Plain", "Timed", "Hook"',
      'status: must be one of "On", "Off"',
      'settings: must be object',
    ]);
    expect(messages(schema, { status: 'On', settings: {} })).toEqual(['kind: is required']);
  });

  it('writes each message with the caller’s sentence, once', () => {
    const sentence = (path: readonly (string | number)[], problem: string) =>
      path.length > 0 ? `parameter "${path.join('.')}" ${problem}` : `parameters ${problem}`;
    const schema = closed({
      headers: { type: 'object', additionalProperties: { type: 'string' } },
    });
    expect(messages(schema, { headers: { Accept: 1 } }, { sentence })).toEqual([
      'parameter "headers.Accept" must be string',
    ]);
    expect(messages(schema, [], { sentence })).toEqual(['parameters must be object']);
    const twice = { path: ['a'], problem: 'is bad' };
    expect(describeProblems([twice, twice], { sentence })).toEqual(['parameter "a" is bad']);
  });
});
