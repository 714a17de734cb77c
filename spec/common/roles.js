// The implementation of `@roles` (declared in roles.tsp). TypeSpec loads decorators from
// JavaScript, so this one file of the contract is not TypeSpec.
import { getExtensions, setExtension } from '@typespec/openapi';

/**
 * Writes `x-roles` on each operation of the target (an interface's operations, or one operation):
 * `admin` first, then the roles given. An operation that declares its own roles keeps them.
 *
 * @param {import('@typespec/compiler').DecoratorContext} context
 * @param {import('@typespec/compiler').Interface | import('@typespec/compiler').Operation} target
 * @param {...string} roles
 */
function $roles(context, target, ...roles) {
  const declared = ['admin', ...new Set(roles)];
  const operations = target.kind === 'Interface' ? [...target.operations.values()] : [target];
  for (const operation of operations) {
    if (getExtensions(context.program, operation).has('x-roles')) continue;
    setExtension(context.program, operation, 'x-roles', declared);
  }
}

export const $decorators = { Trellis: { roles: $roles } };
