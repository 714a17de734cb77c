import { describe, expect, it } from 'vitest';
import { pluginSchemaValidator, trellisSchemas } from './ajv.js';

describe('trellisSchemas', () => {
  it('is strict: a typo in one of our schemas fails at once', () => {
    expect(() => trellisSchemas.compile({ type: 'object', propertees: {} })).toThrow(
      /unknown keyword: "propertees"/,
    );
  });
});

describe('pluginSchemaValidator', () => {
  it('compiles a schema once however often it is asked for', () => {
    const schema = () => ({ type: 'object', properties: { n: { type: 'integer', default: 1 } } });
    expect(pluginSchemaValidator(schema())).toBe(pluginSchemaValidator(schema()));
    const value: Record<string, unknown> = {};
    expect(pluginSchemaValidator(schema())(value)).toBe(true);
    expect(value).toEqual({ n: 1 });
  });

  it('keeps the $id of one plugin’s schema from colliding with another’s', () => {
    const a = pluginSchemaValidator({ $id: 'params.json', type: 'string' });
    const b = pluginSchemaValidator({ $id: 'params.json', type: 'number' });
    expect([a('x'), b('x'), b(1)]).toEqual([true, false, true]);
  });

  it('is lenient about keywords plugin authors add, and rejects what is not a schema', () => {
    expect(pluginSchemaValidator({ type: 'object', 'x-ui': 'form' })({})).toBe(true);
    expect(() => pluginSchemaValidator({ type: 'nonsense' })).toThrow();
  });
});
