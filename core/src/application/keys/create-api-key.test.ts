import { describe, expect, it } from 'vitest';
import { rolesBeyond } from './create-api-key.js';

describe('rolesBeyond', () => {
  it('gives an admin every role, anyone else only their own', () => {
    expect(rolesBeyond(['admin'], ['admin', 'workflow', 'plugins'])).toEqual([]);
    expect(rolesBeyond(['workflow', 'config'], ['workflow'])).toEqual([]);
    expect(rolesBeyond(['workflow'], ['admin', 'workflow', 'config', 'config'])).toEqual([
      'admin',
      'config',
    ]);
    expect(rolesBeyond([], ['workflow'])).toEqual(['workflow']);
  });
});
