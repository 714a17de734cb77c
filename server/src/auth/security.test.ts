import type { Document } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../openapi.js';
import { accessByOperation, operationKey } from './security.js';

/**
 * The seed's table of areas and the roles allowed besides admin, `/approvals` and `/executions`,
 * every workflow's approvals and runs, and `/workflow-summaries`, the workflows list with their
 * latest runs, which belong to the workflow area like those under `/workflows`, and `/me`, which
 * any role may ask.
 */
function seedRolesOf(path: string, method: string): string[] {
  if (path.startsWith('/config')) return ['config'];
  if (path.startsWith('/plugins')) return ['plugins'];
  if (
    path.startsWith('/workflows') ||
    path === '/workflow-summaries' ||
    path === '/approvals' ||
    path.startsWith('/executions')
  ) {
    return ['workflow'];
  }
  if (path === '/me') return ['config', 'plugins', 'workflow'];
  // Projects: any role lists and reads them (their members only); the rest is for admins (of
  // the project, or of the instance, which the handlers check).
  if (method === 'get' && (path === '/projects' || path === '/projects/{projectId}')) {
    return ['config', 'plugins', 'workflow'];
  }
  if (path.startsWith('/projects')) return [];
  // Notifications' delivery log and the audit trail: admin only.
  if (path.startsWith('/notifications') || path.startsWith('/audit')) return [];
  return [
    'none: only /config, /plugins, /workflows, /executions, /approvals and /me are protected',
  ];
}

const documentWith = (paths: Record<string, unknown>): Document =>
  ({
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    security: [{ BasicAuth: [] }],
    paths,
  }) as Document;

describe('accessByOperation', () => {
  it('gives every protected operation of the spec the roles of its area, admin first', () => {
    const access = accessByOperation(openApiDocument());
    const publicOperations: string[] = [];
    for (const [key, entry] of access) {
      if (entry === 'public') {
        publicOperations.push(key);
        continue;
      }
      const [method = '', path = ''] = key.split(' ');
      expect({ key, roles: entry.roles }).toEqual({
        key,
        roles: ['admin', ...seedRolesOf(path, method)],
      });
      expect(entry.requirements).toEqual([['BasicAuth'], ['BearerAuth']]);
    }
    // The seed's public endpoints, the definition schema editors fetch without credentials,
    // what orchestrators and Prometheus ask (probes, metrics), and webhook deliveries (which a
    // trigger's signature guards instead), approval links (whose token is the credential), and
    // the single sign-on settings the console signs in with.
    expect(publicOperations.sort()).toEqual([
      'get /approvals/decide/{token}',
      'get /auth/oidc',
      'get /health',
      'get /livez',
      'get /metrics',
      'get /readyz',
      'get /schemas/workflow-definition.json',
      'get /version',
      'post /approvals/decide/{token}',
      'post /hooks/{triggerId}',
    ]);
    expect(access.size).toBeGreaterThan(30);
  });

  it('refuses a document whose protected operation declares no roles', () => {
    const document = documentWith({
      '/open': { get: { security: [{}] } },
      '/reports': { get: { 'x-roles': ['admin', 'config'] }, delete: {} },
    });
    expect(() => accessByOperation(document)).toThrow(
      'The protected operation DELETE /reports has no x-roles',
    );
  });

  it('treats an empty security requirement as public and takes x-roles verbatim', () => {
    const document = documentWith({
      '/open': { get: { security: [] }, post: { security: [{ BasicAuth: [] }, {}] } },
      '/reports': { get: { 'x-roles': ['admin', 'plugins', 'config'] } },
    });
    const access = accessByOperation(document);
    expect(access.get(operationKey('GET', '/open'))).toBe('public');
    expect(access.get(operationKey('post', '/open'))).toBe('public');
    expect(access.get(operationKey('get', '/reports'))).toEqual({
      requirements: [['BasicAuth']],
      roles: ['admin', 'plugins', 'config'],
    });
  });
});
