import { describe, expect, it } from 'vitest';
import { Invalid, Unavailable } from '#definition/errors.js';
import { permanentCause } from './permanent-failures.js';

const sqlError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('permanentCause', () => {
  it('names the errors no retry can fix', () => {
    expect(permanentCause(new Invalid('tasks[0]: nests too deep'))).toBe(
      'tasks[0]: nests too deep',
    );
    expect(permanentCause(sqlError('22P05', 'unsupported Unicode escape sequence'))).toBe(
      'the database refused the data: unsupported Unicode escape sequence [SQLSTATE 22P05]',
    );
    expect(permanentCause(sqlError('54001', 'stack depth limit exceeded'))).toMatch(
      /^the database refused the data: .*\[SQLSTATE 54001\]$/,
    );
    expect(permanentCause(new RangeError('Maximum call stack size exceeded'))).toBe(
      'the data is too large to handle: Maximum call stack size exceeded',
    );
  });

  it('leaves what a retry may fix to Temporal', () => {
    expect(permanentCause(new Unavailable('Database unavailable'))).toBeNull();
    expect(permanentCause(sqlError('40001', 'could not serialize access'))).toBeNull();
    expect(permanentCause(sqlError('57P01', 'terminating connection'))).toBeNull();
    expect(permanentCause(new Error('ECONNRESET'))).toBeNull();
    expect(permanentCause(undefined)).toBeNull();
  });
});
