import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../core/src/errors.js';
import { allowedRoles, assertAllowed } from './roles.js';

describe('allowedRoles', () => {
  it('maps each area to its role, admin always allowed', () => {
    expect(allowedRoles({ path: '/config/{configId}' })).toEqual(['admin', 'config']);
    expect(allowedRoles({ path: '/plugins/{group}/{name}' })).toEqual(['admin', 'plugins']);
    expect(allowedRoles({ path: '/workflows/{workflowId}/executions' })).toEqual([
      'admin',
      'workflow',
    ]);
  });
  it('keeps anything outside the known areas admin-only, and honours x-roles', () => {
    expect(allowedRoles({ path: '/secret' })).toEqual(['admin']);
    expect(allowedRoles({ path: '/secret', 'x-roles': ['workflow'] })).toEqual([
      'admin',
      'workflow',
    ]);
  });
});

describe('assertAllowed', () => {
  it('passes a holder of any allowed role and refuses others with 403 naming the roles', () => {
    expect(() =>
      assertAllowed({ name: 'w', roles: ['workflow'] }, ['admin', 'workflow']),
    ).not.toThrow();
    try {
      assertAllowed({ name: 'c', roles: ['config'] }, ['admin', 'workflow']);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(403);
      expect((error as ApiError).messages[0]).toContain('admin, workflow');
    }
  });
});
