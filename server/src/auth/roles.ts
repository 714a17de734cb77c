import type { Role } from '#platform/config/types.js';
import { HttpError } from '../http-error.js';
import type { AuthUser } from './user.js';

/** Every role there is; typed so that a new `Role` cannot be left out. */
const knownRoles: Record<Role, true> = { admin: true, config: true, plugins: true, workflow: true };

const isRole = (value: unknown): value is Role =>
  typeof value === 'string' && Object.hasOwn(knownRoles, value);

/**
 * The roles that may call a protected operation: exactly the list in its `x-roles` extension,
 * which the spec declares with `@roles` (spec/common/roles.tsp). Throws, naming the operation,
 * when the list is missing or empty, names an unknown role, or leaves out `admin` (who may call
 * every protected operation): the server must not start on such a document.
 */
export function declaredRoles(operation: object, name: string): Role[] {
  const declared = 'x-roles' in operation ? operation['x-roles'] : undefined;
  const fix = 'declare its roles with @roles in spec/ and run `npm run gen`';
  if (!Array.isArray(declared) || declared.length === 0) {
    throw new Error(`The protected operation ${name} has no x-roles; ${fix}.`);
  }
  const unknown = declared.filter((role) => !isRole(role));
  if (unknown.length > 0) {
    throw new Error(`The x-roles of ${name} name unknown roles: ${unknown.join(', ')}; ${fix}.`);
  }
  if (!declared.includes('admin')) {
    throw new Error(`The x-roles of ${name} leave out admin, who may call everything; ${fix}.`);
  }
  return [...new Set(declared as Role[])];
}

/** Throws 403 naming the roles needed unless the user holds one of them. */
export function assertAllowed(user: AuthUser, allowed: Role[]): void {
  if (user.roles.some((role) => allowed.includes(role))) return;
  throw new HttpError(
    403,
    `User "${user.name}" may not call this operation; it needs one of the roles: ${allowed.join(', ')}.`,
  );
}
