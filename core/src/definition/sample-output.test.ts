import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pluginSchemaValidator } from './validation/ajv.js';
import { sampleOutput } from './sample-output.js';

const pluginsRoot = path.resolve(import.meta.dirname, '../../../plugins');
const manifests = readdirSync(pluginsRoot, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((entry) => {
    try {
      const text = readFileSync(path.join(pluginsRoot, entry.name, 'plugin.json'), 'utf8');
      return [JSON.parse(text) as { type: string; output?: object }];
    } catch {
      return [];
    }
  });

describe('sampleOutput', () => {
  it.each(manifests.map((manifest) => [manifest.type, manifest] as const))(
    "gives a value that fits %s's output schema",
    (_, manifest) => {
      const schema = manifest.output ?? {};
      const validate = pluginSchemaValidator(schema);
      const value = sampleOutput(schema);
      expect(validate(structuredClone(value)), JSON.stringify(validate.errors)).toBe(true);
    },
  );

  it('is the same value for the same schema', () => {
    const schema = manifests.find((manifest) => manifest.type === 'Net/Http')!.output;
    expect(sampleOutput(schema)).toEqual(sampleOutput(schema));
  });

  it('takes const, default, examples and enum first, then bounds', () => {
    expect(sampleOutput({ const: 3 })).toBe(3);
    expect(sampleOutput({ type: 'string', default: 'd' })).toBe('d');
    expect(sampleOutput({ type: 'string', examples: ['e'] })).toBe('e');
    expect(sampleOutput({ enum: ['a', 'b'] })).toBe('a');
    expect(sampleOutput({ type: 'integer', minimum: 5 })).toBe(5);
    expect(sampleOutput({ type: 'integer', exclusiveMinimum: 5 })).toBe(6);
    expect(sampleOutput({ type: 'number', maximum: -2 })).toBe(-2);
    expect(sampleOutput({ type: 'string', minLength: 10 })).toHaveLength(10);
    expect(sampleOutput({ type: 'string', maxLength: 2 })).toBe('sa');
    expect(sampleOutput({ type: 'string', format: 'date-time' })).toBe('1970-01-01T00:00:00.000Z');
    expect(sampleOutput({ type: ['null', 'integer'] })).toBe(0);
    expect(sampleOutput({ type: 'array', items: { type: 'boolean' }, minItems: 2 })).toEqual([
      false,
      false,
    ]);
    expect(sampleOutput({ type: 'array', maxItems: 0 })).toEqual([]);
    expect(
      sampleOutput({
        allOf: [
          { type: 'object', properties: { a: { type: 'integer' } } },
          { properties: { b: { type: 'string' } }, required: ['c'] },
        ],
      }),
    ).toEqual({ a: 0, b: 'sample', c: null });
  });

  it('ends on a recursive schema', () => {
    const schema: Record<string, unknown> = { type: 'object', properties: {} };
    (schema.properties as Record<string, unknown>).self = schema;
    expect(() => sampleOutput(schema)).not.toThrow();
  });
});
