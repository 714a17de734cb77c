import type { Document, Operation } from 'openapi-backend';
import type { Role, TrellisConfig } from '#platform/config/types.js';
import { HttpError } from '../http-error.js';
import type { Logger } from '#platform/logging.js';
import { apiKeyStart, looksLikeApiKey } from '#platform/security/api-key-secret.js';
import { createBasicAuthenticator, warnAboutPlainTextPasswords } from './basic.js';
import { createBearerAuthenticator } from './bearer.js';
import type { LoginGuard } from './login-guard.js';
import { assertAllowed, declaredRoles } from './roles.js';
import type { AuthUser } from './user.js';

/** Verifies an `Authorization` header sent from the client address `address`. */
export type Authenticate = (header: string, address: string) => Promise<AuthUser>;

/** What one security scheme made of the request's `Authorization` header. */
type SchemeResult = AuthUser | { rejected: unknown } | null;

/** Who may call a protected operation. */
export interface Access {
  /** The spec's security requirements: any one satisfied, each by all of its schemes. */
  requirements: string[][];
  /** Its `x-roles`: the caller must hold one of them. */
  roles: Role[];
}

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** `get /config/{configId}`: how {@link accessByOperation} names an operation. */
export const operationKey = (method: string, path: string): string =>
  `${method.toLowerCase()} ${path}`;

/**
 * Who may call each operation of the document, by method and path. An operation is public when it
 * has no security requirement or an empty one (`security: [{}]`); any other operation must
 * declare its roles, else this throws and the server does not start.
 */
export function accessByOperation(document: Document): Map<string, Access | 'public'> {
  const access = new Map<string, Access | 'public'>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of methods) {
      const operation = item?.[method];
      if (!operation) continue;
      const requirements = (operation.security ?? document.security ?? []).map((requirement) =>
        Object.keys(requirement),
      );
      const key = operationKey(method, path);
      if (requirements.length === 0 || requirements.some((schemes) => schemes.length === 0)) {
        access.set(key, 'public');
      } else {
        const name = `${method.toUpperCase()} ${path}`;
        access.set(key, { requirements, roles: declaredRoles(operation, name) });
      }
    }
  }
  return access;
}

const REALM = 'Trellis';

/**
 * Authentication and authorisation as the spec declares them. The spec's security schemes decide
 * which operations are protected; a protected operation needs one of its security requirements
 * satisfied (Basic and Bearer JWTs, as configured, and API keys sent as Bearer tokens, verify the
 * `Authorization` header), then one of the
 * roles its `x-roles` declares, held by the caller as `actingAs` makes it (with its roles in the
 * request's project). Returns that caller, or null for a public operation; `authenticated` hears
 * of the caller before its roles are checked (a 403 has a caller too). Throws
 * `HttpError` 401 (with `WWW-Authenticate`) or 403 naming the roles; throws at once, before
 * serving anything, when a protected operation declares no roles.
 */
export function createAuthorizer(
  document: Document,
  config: TrellisConfig,
  logger: Logger,
  guard: LoginGuard | null = null,
  authenticateApiKey: Authenticate | null = null,
): (
  operation: Operation,
  authorization: string | undefined,
  address: string,
  authenticated?: (user: AuthUser) => void,
  actingAs?: (caller: AuthUser) => Promise<AuthUser>,
) => Promise<AuthUser | null> {
  const { Basic, Bearer, Oidc } = config.Security;
  warnAboutPlainTextPasswords(Basic, logger);
  const authenticateJwt = acceptsBearer(config)
    ? createBearerAuthenticator(Bearer, guard, Oidc)
    : null;
  // A Bearer value is an API key when it starts as one, else a JWT (when those are configured).
  const bearerToken = /^bearer\s+(\S*)/i;
  const authenticators: Record<'basic' | 'bearer', Authenticate | null> = {
    basic: Basic.Enabled ? createBasicAuthenticator(Basic, guard) : null,
    bearer:
      authenticateJwt && authenticateApiKey
        ? (header, address) =>
            looksLikeApiKey(bearerToken.exec(header)?.[1] ?? '')
              ? authenticateApiKey(header, address)
              : authenticateJwt(header, address)
        : (authenticateJwt ?? authenticateApiKey),
  };
  // Without JWTs, the Bearer scheme answers API keys only.
  const bearerPrefix = new RegExp(`^bearer\\s${authenticateJwt ? '' : `+${apiKeyStart}`}`, 'i');
  const challenge = [
    Basic.Enabled ? `Basic realm="${REALM}", charset="UTF-8"` : null,
    authenticators.bearer ? `Bearer realm="${REALM}"` : null,
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
    const prefix = kind === 'bearer' ? bearerPrefix : /^basic\s/i;
    if (authenticate) schemes.set(name, { prefix, authenticate });
  }

  const accessOf = accessByOperation(document);
  const accepted = acceptedSchemes(config, authenticateApiKey !== null);

  async function checkScheme(
    name: string,
    header: string | undefined,
    address: string,
  ): Promise<SchemeResult> {
    const scheme = schemes.get(name);
    if (!scheme || !header || !scheme.prefix.test(header)) return null;
    try {
      return await scheme.authenticate(header, address);
    } catch (error) {
      // Locked out: that is the answer, whatever another scheme would say.
      if (error instanceof HttpError && error.status === 429) throw error;
      return { rejected: error };
    }
  }

  return async (operation, header, address, authenticated, actingAs = async (caller) => caller) => {
    const access = accessOf.get(operationKey(operation.method, operation.path));
    if (!access) throw new Error(`${operation.method} ${operation.path} is not in the document`);
    if (access === 'public') return null;
    const { requirements, roles } = access;
    const results = new Map<string, SchemeResult>();
    for (const schemesNeeded of requirements) {
      let user: AuthUser | null = null;
      for (const name of schemesNeeded) {
        if (!results.has(name)) results.set(name, await checkScheme(name, header, address));
        const result = results.get(name);
        user = result && !('rejected' in result) ? result : null;
        if (!user) break;
      }
      if (user) {
        authenticated?.(user);
        const acting = await actingAs(user);
        assertAllowed(acting, roles);
        await guard?.request(user.name);
        return acting;
      }
    }
    const reasons = [...results.values()]
      .map((result) => (result && 'rejected' in result ? result.rejected : null))
      .filter((error): error is HttpError => error instanceof HttpError)
      .flatMap((error) => error.messages);
    const messages =
      reasons.length > 0
        ? reasons
        : header
          ? [`The Authorization scheme is not accepted; use ${accepted}.`]
          : [`Authentication is required (${accepted}).`];
    throw new HttpError(401, messages, challenge ? { 'WWW-Authenticate': challenge } : {});
  };
}

/** Whether Bearer tokens are accepted: the Bearer section's, or single sign-on's ID tokens. */
const acceptsBearer = (config: TrellisConfig) =>
  config.Security.Bearer.Enabled || config.Security.Oidc.Enabled;

function acceptedSchemes(config: TrellisConfig, apiKeys: boolean): string {
  const names = [
    config.Security.Basic.Enabled ? 'Basic' : null,
    acceptsBearer(config) ? 'Bearer' : apiKeys ? 'Bearer with an API key' : null,
  ].filter((name) => name !== null);
  return names.length > 0 ? names.join(' or ') : 'no scheme is enabled';
}
