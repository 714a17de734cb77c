import type { ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { describeValidationErrors } from './openapi.js';

const error = (instancePath: string, keyword: string, params: object, message?: string) =>
  ({ instancePath, keyword, params, message, schemaPath: '#' }) as ErrorObject;

describe('describeValidationErrors', () => {
  it('names each field as the client sent it, one message per problem', () => {
    expect(
      describeValidationErrors([
        error('/requestBody/name', 'type', { type: 'string' }, 'must be string'),
        error('/path/workflowId', 'format', { format: 'uuid' }, 'must match format "uuid"'),
        error('/requestBody', 'required', { missingProperty: 'definition' }),
        error('', 'required', { missingProperty: 'requestBody' }),
        error('/requestBody', 'unevaluatedProperties', { unevaluatedProperty: 'extra' }),
        error('/requestBody/type', 'enum', { allowedValues: ['Manual', 'TimeBased'] }),
        error(
          '/requestBody/tasks/0/name',
          'minLength',
          { limit: 1 },
          'must NOT have fewer than 1 characters',
        ),
        error('/query/pageSize', 'maximum', { limit: 1000 }, 'must be <= 1000'),
      ]),
    ).toEqual([
      'body.name: must be string',
      'path.workflowId: must match format "uuid"',
      'body.definition: is required',
      'body: is required',
      'body.extra: is not allowed',
      'body.type: must be one of "Manual", "TimeBased"',
      'body.tasks[0].name: must NOT have fewer than 1 characters',
      'query.pageSize: must be <= 1000',
    ]);
  });
  it('drops duplicates', () => {
    const same = error('/requestBody/name', 'type', { type: 'string' }, 'must be string');
    expect(describeValidationErrors([same, same])).toHaveLength(1);
  });
});
