import { describe, expect, it } from 'vitest';
import { HttpError } from '../http-error.js';
import { assertAllowed, declaredRoles } from './roles.js';

describe('declaredRoles', () => {
  it('is exactly the x-roles list', () => {
    expect(declaredRoles({ 'x-roles': ['admin', 'workflow'] }, 'GET /w')).toEqual([
      'admin',
      'workflow',
    ]);
    expect(declaredRoles({ 'x-roles': ['admin'] }, 'GET /a')).toEqual(['admin']);
  });

  it('refuses a missing, empty, unknown or admin-less list, naming the operation', () => {
    expect(() => declaredRoles({}, 'GET /secret')).toThrow(
      'The protected operation GET /secret has no x-roles; declare its roles with @roles',
    );
    expect(() => declaredRoles({ 'x-roles': [] }, 'GET /secret')).toThrow(/GET \/secret/);
    expect(() => declaredRoles({ 'x-roles': 'workflow' }, 'GET /secret')).toThrow(/no x-roles/);
    expect(() => declaredRoles({ 'x-roles': ['admin', 'workflows'] }, 'PUT /w')).toThrow(
      'The x-roles of PUT /w name unknown roles: workflows',
    );
    expect(() => declaredRoles({ 'x-roles': ['workflow'] }, 'PUT /w')).toThrow(
      'The x-roles of PUT /w leave out admin',
    );
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
      expect(error).toBeInstanceOf(HttpError);
      expect((error as HttpError).status).toBe(403);
      expect((error as HttpError).messages).toEqual([
        'User "c" may not call this operation; it needs one of the roles: admin, workflow.',
      ]);
    }
  });
});
