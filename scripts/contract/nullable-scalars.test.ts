import { describe, expect, it } from 'vitest';
import type { Json } from './closed-objects.js';
import { withNullableScalarsInlined } from './nullable-scalars.js';

const schemas = {
  Uuid: { type: 'string', format: 'uuid', description: 'A UUID.' },
  Status: { type: 'string', enum: ['Active'] },
  Thing: { type: 'object', properties: {} },
};

const documentWith = (property: Json): Json => ({
  components: { schemas: { ...schemas, Holder: { type: 'object', properties: { p: property } } } },
});

describe('withNullableScalarsInlined', () => {
  it('writes a nullable reference to a scalar as the scalar itself, keeping the property’s description', () => {
    const document = withNullableScalarsInlined(
      documentWith({
        anyOf: [{ $ref: '#/components/schemas/Uuid' }, { type: 'null' }],
        description: 'The child.',
      }),
    );
    expect(document).toEqual(
      documentWith({
        anyOf: [{ type: 'string', format: 'uuid' }, { type: 'null' }],
        description: 'The child.',
      }),
    );
  });

  it('keeps references to enums and objects, and references that are not nullable', () => {
    const kept: Json[] = [
      { anyOf: [{ $ref: '#/components/schemas/Status' }, { type: 'null' }] },
      { anyOf: [{ $ref: '#/components/schemas/Thing' }, { type: 'null' }] },
      { $ref: '#/components/schemas/Uuid' },
    ];
    for (const property of kept) {
      expect(withNullableScalarsInlined(documentWith(property))).toEqual(documentWith(property));
    }
  });
});
