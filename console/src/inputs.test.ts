import { describe, expect, it } from 'vitest';
import { readDefinition } from './definition.js';
import { initialText, inputFields, readInputs, splitServerMessages } from './inputs.js';

const fields = inputFields(
  readDefinition({
    inputs: {
      who: { type: 'string', required: true },
      count: { type: 'integer', default: 3 },
      ratio: { type: 'number' },
      on: { type: 'boolean', default: false },
      tags: { type: 'array' },
      extra: { Type: 'object', Default: { a: 1 } },
      odd: { type: 'date' },
    },
  }).inputs,
);

describe('the run form', () => {
  it('has a field per declared input of a known type, starting at its default', () => {
    expect(fields.map((field) => [field.name, field.control, initialText(field)])).toEqual([
      ['who', 'text', ''],
      ['count', 'number', '3'],
      ['ratio', 'number', ''],
      ['on', 'boolean', 'false'],
      ['tags', 'json', ''],
      ['extra', 'json', '{\n  "a": 1\n}'],
    ]);
  });

  it('reads typed values, leaves out empty optional ones, and names what cannot be read', () => {
    expect(
      readInputs(fields, { who: 'ann', count: '7', on: 'true', tags: '[1]', extra: '' }),
    ).toEqual({
      inputs: { who: 'ann', count: 7, on: true, tags: [1] },
      problems: {},
    });
    expect(
      readInputs(fields, { who: '', count: '1.5', ratio: 'x', tags: '{}', extra: '{' }),
    ).toEqual({
      inputs: {},
      problems: {
        who: 'is required',
        count: 'must be a whole number',
        ratio: 'must be a number',
        tags: 'must be JSON of an array',
        extra: 'must be JSON (an object)',
      },
    });
  });

  it("puts the server's messages beside the inputs they name", () => {
    expect(
      splitServerMessages(
        [
          'body.inputs.count: must be an integer',
          'body.inputs.unknown: is not declared',
          'Something else.',
        ],
        ['count'],
      ),
    ).toEqual({
      byInput: { count: 'must be an integer' },
      others: ['body.inputs.unknown: is not declared', 'Something else.'],
    });
  });
});
