import { describe, expect, it } from 'vitest';
import { NonRetryableError, nonRetryable } from './index.js';

describe('NonRetryableError', () => {
  it('carries the nonRetryable flag the engine reads, with its message and cause', () => {
    const cause = new Error('underneath');
    const error = nonRetryable('input is not valid Base64', { cause });
    expect(error).toBeInstanceOf(NonRetryableError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      name: 'NonRetryableError',
      message: 'input is not valid Base64',
      nonRetryable: true,
      cause,
    });
  });
});
