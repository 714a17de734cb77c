import type { Role } from '../../../core/src/config/types.js';
import { ApiError } from '../../../core/src/errors.js';
import type { AuthUser } from './user.js';

/**
 * The one declaration of who may call what: the first path segment names the area, the area
 * names its role (DESIGN.md §5). An operation may override it with an `x-roles` extension.
 * Anything outside the known areas is admin-only. Public operations are those the spec marks
 * with no security requirement; they never reach this check.
 */
const areaRoles: Record<string, Role> = {
  config: 'config',
  plugins: 'plugins',
  workflows: 'workflow',
};

/** The roles allowed to call an operation (admin always among them). */
export function allowedRoles(operation: { path: string; 'x-roles'?: unknown }): Role[] {
  const declared = operation['x-roles'];
  if (Array.isArray(declared)) {
    return [...new Set<Role>(['admin', ...(declared as Role[])])];
  }
  const area = operation.path.split('/')[1] ?? '';
  const role = areaRoles[area];
  return role ? ['admin', role] : ['admin'];
}

/** Throws 403 naming the roles needed unless the user holds one of them. */
export function assertAllowed(user: AuthUser, allowed: Role[]): void {
  if (user.roles.some((role) => allowed.includes(role))) return;
  throw new ApiError(
    403,
    `User "${user.name}" may not call this operation; it needs one of the roles: ${allowed.join(', ')}.`,
  );
}
