import { describe, expect, it } from 'vitest';
import { validationProblem } from './problem-codes.js';

describe('validationProblem', () => {
  it('codes what describe.ts and the input checks write, with the place as the path', () => {
    expect(validationProblem('body.inputs.who: is required (string)')).toEqual({
      code: 'validation.required',
      message: 'body.inputs.who: is required (string)',
      path: 'body.inputs.who',
    });
    expect(validationProblem('body.extra: is not allowed').code).toBe('validation.unknown');
    expect(
      validationProblem('body.definition: tasks[0].dependsOn: is not a known property (known: x)'),
    ).toMatchObject({ code: 'validation.unknown', path: 'body.definition' });
    expect(validationProblem('body.type: must be one of "Manual", "TimeBased"').code).toBe(
      'validation.enum',
    );
    expect(validationProblem('query.pageSize: must be <= 1000').code).toBe('validation.invalid');
    expect(validationProblem('Something is wrong.')).toEqual({
      code: 'validation.invalid',
      message: 'Something is wrong.',
    });
  });
});
