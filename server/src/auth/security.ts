import type { Document, Operation } from 'openapi-backend';
import type { Role, TrellisConfig } from '../../../core/src/config/types.js';
import { ApiError } from '../../../core/src/errors.js';
import type { Logger } from '../../../core/src/logging.js';
import { createBasicAuthenticator, warnAboutPlainTextPasswords } from './basic.js';
import { createBearerAuthenticator } from './bearer.js';
import { allowedRoles, assertAllowed } from './roles.js';
import type { AuthUser } from './user.js';

type Authenticate = (header: string) => Promise<AuthUser>;

/** What one security scheme made of the request's `Authorization` header. */
type SchemeResult = AuthUser | { rejected: unknown } | null;

/** Who may call an operation, worked out once per operation. */
interface Access {
  /** The spec's security requirements: any one satisfied, each by all of its schemes. */
  requirements: string[][];
  roles: Role[];
}

const REALM = 'Trellis';

/**
 * Authentication and authorisation as the spec declares them. The spec's security schemes decide
 * which operations are protected; a protected operation needs one of its security requirements
 * satisfied (Basic and Bearer, as configured, verify the `Authorization` header), then one of the
 * roles of its area. Returns the caller, or null for a public operation. Throws `ApiError` 401
 * (with `WWW-Authenticate`) or 403 naming the roles.
 */
export function createAuthorizer(
  document: Document,
  config: TrellisConfig,
  logger: Logger,
): (operation: Operation, authorization: string | undefined) => Promise<AuthUser | null> {
  const { Basic, Bearer } = config.Security;
  warnAboutPlainTextPasswords(Basic, logger);
  const authenticators: Record<'basic' | 'bearer', Authenticate | null> = {
    basic: Basic.Enabled ? createBasicAuthenticator(Basic) : null,
    bearer: Bearer.Enabled ? createBearerAuthenticator(Bearer) : null,
  };
  const challenge = [
    Basic.Enabled ? `Basic realm="${REALM}", charset="UTF-8"` : null,
    Bearer.Enabled ? `Bearer realm="${REALM}"` : null,
  ]
    .filter((value) => value !== null)
    .join(', ');

  // Each scheme of the spec that is enabled here: the header prefix it answers and its check.
  const schemes = new Map<string, { prefix: RegExp; authenticate: Authenticate }>();
  const declared = (document.components?.securitySchemes ?? {}) as Record<
    string,
    { type?: string; scheme?: string }
  >;
  for (const [name, scheme] of Object.entries(declared)) {
    const kind = scheme.type === 'http' ? scheme.scheme?.toLowerCase() : undefined;
    if (kind !== 'basic' && kind !== 'bearer') continue;
    const authenticate = authenticators[kind];
    if (authenticate) schemes.set(name, { prefix: new RegExp(`^${kind}\\s`, 'i'), authenticate });
  }

  const accessOf = new WeakMap<Operation, Access>();
  const access = (operation: Operation): Access => {
    let known = accessOf.get(operation);
    if (!known) {
      known = {
        requirements: (operation.security ?? []).map((requirement) => Object.keys(requirement)),
        roles: allowedRoles(operation as { path: string }),
      };
      accessOf.set(operation, known);
    }
    return known;
  };

  async function checkScheme(name: string, header: string | undefined): Promise<SchemeResult> {
    const scheme = schemes.get(name);
    if (!scheme || !header || !scheme.prefix.test(header)) return null;
    try {
      return await scheme.authenticate(header);
    } catch (error) {
      return { rejected: error };
    }
  }

  return async (operation, header) => {
    const { requirements, roles } = access(operation);
    if (requirements.length === 0) return null;
    const results = new Map<string, SchemeResult>();
    for (const schemesNeeded of requirements) {
      // An empty requirement (`security: [{}]`) lets anyone call the operation.
      if (schemesNeeded.length === 0) return null;
      let user: AuthUser | null = null;
      for (const name of schemesNeeded) {
        if (!results.has(name)) results.set(name, await checkScheme(name, header));
        const result = results.get(name);
        user = result && !('rejected' in result) ? result : null;
        if (!user) break;
      }
      if (user) {
        assertAllowed(user, roles);
        return user;
      }
    }
    const reasons = [...results.values()]
      .map((result) => (result && 'rejected' in result ? result.rejected : null))
      .filter((error): error is ApiError => error instanceof ApiError)
      .flatMap((error) => error.messages);
    const messages =
      reasons.length > 0
        ? reasons
        : header
          ? [`The Authorization scheme is not accepted; use ${acceptedSchemes(config)}.`]
          : [`Authentication is required (${acceptedSchemes(config)}).`];
    throw new ApiError(401, messages, challenge ? { 'WWW-Authenticate': challenge } : {});
  };
}

function acceptedSchemes(config: TrellisConfig): string {
  const names = [
    config.Security.Basic.Enabled ? 'Basic' : null,
    config.Security.Bearer.Enabled ? 'Bearer' : null,
  ].filter((name) => name !== null);
  return names.length > 0 ? names.join(' or ') : 'no scheme is enabled';
}
