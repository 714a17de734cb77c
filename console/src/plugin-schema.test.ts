import { describe, expect, it } from 'vitest';
import { saysNothing, schemaRows, typeOf } from './plugin-schema.js';

describe('a plugin schema as rows', () => {
  it('lists each property with its type, requiredness, description and default', () => {
    const rows = schemaRows({
      type: 'object',
      required: ['url'],
      properties: {
        url: { type: 'string', description: 'Where to.' },
        method: { type: 'string', default: 'GET' },
        retry: {
          type: 'object',
          required: ['count'],
          properties: { count: { type: 'integer', default: 3 } },
        },
      },
    });
    expect(rows).toEqual([
      { name: 'url', type: 'string', required: true, description: 'Where to.', default: null },
      { name: 'method', type: 'string', required: false, description: '', default: '"GET"' },
      { name: 'retry', type: 'object', required: false, description: '', default: null },
      { name: 'retry.count', type: 'integer', required: true, description: '', default: '3' },
    ]);
  });

  it('says enums, unions, arrays and alternatives in words', () => {
    expect(typeOf({ enum: ['md5', 'sha256'] })).toBe('one of "md5", "sha256"');
    expect(typeOf({ type: ['string', 'number'] })).toBe('string or number');
    expect(typeOf({ type: 'array', items: { type: 'string' } })).toBe('array of string');
    expect(typeOf({ oneOf: [{ type: 'string' }, { type: 'null' }] })).toBe('string or null');
    expect(typeOf({ const: 'x' })).toBe('"x"');
    expect(typeOf({})).toBe('any');
  });

  it('has no rows for a schema without properties, which says nothing when empty', () => {
    expect(schemaRows({})).toEqual([]);
    expect(schemaRows({ type: 'string' })).toEqual([]);
    expect(saysNothing({})).toBe(true);
    expect(saysNothing({ type: 'object' })).toBe(false);
  });
});
