import { describe, expect, it } from 'vitest';
import { createAjv } from './validation/ajv.js';
import { typedDefinitionSchema, type PluginParameters } from './typed-schema.js';

/** A third-party schema using what draft-07 and 2020-12 spell differently. */
const point: PluginParameters = {
  type: 'Acme/Plot',
  version: '2.0.0',
  parametersSchema: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'plot-parameters.json',
    type: 'object',
    required: ['at'],
    additionalProperties: false,
    properties: {
      at: { $ref: '#/definitions/point' },
      pair: {
        type: 'array',
        items: [{ type: 'string' }, { type: 'integer' }],
        additionalItems: false,
      },
      label: { type: 'string' },
      color: { type: 'string' },
    },
    dependencies: { label: ['color'], color: { properties: { label: { minLength: 1 } } } },
    definitions: {
      point: {
        type: 'object',
        required: ['x'],
        additionalProperties: false,
        properties: { x: { type: 'number' } },
      },
    },
  },
};
const older: PluginParameters = {
  type: 'Acme/Plot',
  version: '1.0.0',
  parametersSchema: { type: 'object', properties: { legacy: { type: 'boolean' } } },
};

const validate = createAjv('2020-12', { allErrors: true, strict: false }).compile(
  typedDefinitionSchema([point, older]),
);

const definition = (type: unknown, parameters?: unknown) => ({
  name: 'W',
  tasks: [{ name: 'T', type, ...(parameters === undefined ? {} : { parameters }) }],
});

function problems(value: unknown): string[] {
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath} ${error.keyword}`);
}

describe('typedDefinitionSchema', () => {
  it('embeds a draft-07 schema as 2020-12: references, tuples and dependencies keep their meaning', () => {
    const plot = { plugin: 'Acme/Plot' };
    expect(
      problems(definition(plot, { at: { x: 1 }, pair: ['a', 2], label: 'l', color: 'c' })),
    ).toEqual([]);
    expect(problems(definition(plot, { at: { y: 1 } }))).toEqual(
      expect.arrayContaining([
        '/tasks/0/parameters/at required',
        '/tasks/0/parameters/at additionalProperties',
      ]),
    );
    expect(problems(definition(plot, { at: { x: 1 }, pair: ['a', 'b'] }))).toContain(
      '/tasks/0/parameters/pair/1 type',
    );
    expect(problems(definition(plot, { at: { x: 1 }, pair: ['a', 2, 3] }))).toContain(
      '/tasks/0/parameters/pair items',
    );
    expect(problems(definition(plot, { at: { x: 1 }, label: 'l' }))).toContain(
      '/tasks/0/parameters dependentRequired',
    );
    expect(problems(definition(plot, { at: { x: 1 }, color: 'c', label: '' }))).toContain(
      '/tasks/0/parameters/label minLength',
    );
    expect(problems(definition(plot, { at: "$[Outputs('A').point]" }))).toEqual([]);
  });

  it('types a task by the version it names, or by the latest when it names none', () => {
    expect(
      problems(definition({ plugin: 'Acme/Plot', version: '1.0.0' }, { legacy: true })),
    ).toEqual([]);
    expect(problems(definition({ plugin: 'acme/PLOT' }, { legacy: true }))).toEqual(
      expect.arrayContaining(['/tasks/0/parameters required']),
    );
    expect(
      problems(definition({ plugin: 'Acme/Plot', version: '1.0.0' }, { legacy: 'yes' })),
    ).toEqual(expect.arrayContaining(['/tasks/0/parameters/legacy type']));
  });

  it('is the same document whatever order the plugins come in', () => {
    expect(JSON.stringify(typedDefinitionSchema([older, point]))).toBe(
      JSON.stringify(typedDefinitionSchema([point, older])),
    );
  });
});
