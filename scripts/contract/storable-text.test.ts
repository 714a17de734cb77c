import { describe, expect, it } from 'vitest';
import type { Json } from './closed-objects.js';
import { storableTextPattern, withStorableText } from './storable-text.js';

const nulFree = { pattern: storableTextPattern };

/** A document whose schemas a request body refers to (and `responseOnly`, a response only). */
const documentWith = (
  schemas: Record<string, Json>,
  paths?: Record<string, Json>,
  responseOnly: Record<string, Json> = {},
): Json => ({
  components: { schemas: { ...schemas, ...responseOnly } },
  paths: paths ?? {
    '/things': {
      post: {
        requestBody: {
          content: {
            'application/json': {
              schema: {
                oneOf: Object.keys(schemas).map((name) => ({
                  $ref: `#/components/schemas/${name}`,
                })),
              },
            },
          },
        },
        responses: {
          '200': {
            content: {
              'application/json': {
                schema: {
                  oneOf: Object.keys(responseOnly).map((name) => ({
                    $ref: `#/components/schemas/${name}`,
                  })),
                },
              },
            },
          },
        },
      },
    },
  },
});

describe('withStorableText', () => {
  it('gives strings with no constraint of their own the pattern, at any depth of a schema', () => {
    const document = withStorableText(
      documentWith({
        Thing: {
          type: 'object',
          properties: {
            name: { type: 'string', minLength: 1 },
            note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
            tags: { type: 'array', items: { type: ['string', 'null'] } },
          },
          additionalProperties: false,
        },
      }),
    );
    expect(document).toEqual(
      documentWith({
        Thing: {
          type: 'object',
          properties: {
            name: { type: 'string', minLength: 1, ...nulFree },
            note: { anyOf: [{ type: 'string', ...nulFree }, { type: 'null' }] },
            tags: { type: 'array', items: { type: ['string', 'null'], ...nulFree } },
          },
          additionalProperties: false,
        },
      }),
    );
  });

  it('leaves strings that say what they hold already: a pattern, a format, an enum or a const', () => {
    const kept: Record<string, Json> = {
      Named: { type: 'string', pattern: '^[a-z]+$' },
      When: { type: 'string', format: 'date-time' },
      Status: { type: 'string', enum: ['Active'] },
      Fixed: { type: 'string', const: 'x' },
    };
    expect(withStorableText(documentWith(kept))).toEqual(documentWith(kept));
  });

  it('gives maps and free-form objects property names without NUL, and closed objects none', () => {
    const document = withStorableText(
      documentWith({
        Map: { type: 'object', additionalProperties: { type: 'integer' } },
        Free: { type: 'object' },
        Closed: { type: 'object', properties: {}, additionalProperties: false },
        Either: { type: 'object', oneOf: [{ $ref: '#/components/schemas/Closed' }] },
      }),
    );
    expect(document).toEqual(
      documentWith({
        Map: { type: 'object', additionalProperties: { type: 'integer' }, propertyNames: nulFree },
        Free: { type: 'object', propertyNames: nulFree },
        Closed: { type: 'object', properties: {}, additionalProperties: false },
        Either: { type: 'object', oneOf: [{ $ref: '#/components/schemas/Closed' }] },
      }),
    );
  });

  it('leaves the schemas only responses use: an error may quote the NUL it refuses', () => {
    const responseOnly = { Error: { type: 'object', properties: { message: { type: 'string' } } } };
    const document = withStorableText(
      documentWith({ Sent: { type: 'string' } }, undefined, responseOnly),
    );
    expect(document).toEqual(
      documentWith({ Sent: { type: 'string', ...nulFree } }, undefined, responseOnly),
    );
  });

  it('reaches the parameters and request bodies of operations, but never examples', () => {
    const operation = {
      parameters: [{ name: 'q', in: 'query', schema: { type: 'string' }, example: 'x' }],
      requestBody: {
        content: {
          'application/json': {
            schema: { type: 'object' },
            example: { type: 'string' },
          },
        },
      },
    };
    const document = withStorableText(documentWith({}, { '/things': { post: operation } }));
    expect(document).toEqual(
      documentWith(
        {},
        {
          '/things': {
            post: {
              parameters: [
                { name: 'q', in: 'query', schema: { type: 'string', ...nulFree }, example: 'x' },
              ],
              requestBody: {
                content: {
                  'application/json': {
                    schema: { type: 'object', propertyNames: nulFree },
                    example: { type: 'string' },
                  },
                },
              },
            },
          },
        },
      ),
    );
  });
});
