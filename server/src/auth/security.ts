import type { Request } from 'express';
import type { Context, Document, OpenAPIBackend } from 'openapi-backend';
import type { TrellisConfig } from '../../../core/src/config/types.js';
import { ApiError } from '../../../core/src/errors.js';
import type { Logger } from '../../../core/src/logging.js';
import { createBasicAuthenticator, warnAboutPlainTextPasswords } from './basic.js';
import { createBearerAuthenticator } from './bearer.js';
import { allowedRoles, assertAllowed } from './roles.js';
import type { AuthUser } from './user.js';

type Authenticate = (header: string) => Promise<AuthUser>;

const REALM = 'Trellis';

/**
 * Wires Basic and Bearer authentication (as configured) into openapi-backend: the spec's
 * security schemes decide which operations are protected; the scheme's handler verifies the
 * `Authorization` header; after that the caller's roles are checked against the operation.
 * Failures are thrown as `ApiError`s (401 with `WWW-Authenticate`, 403 naming the roles).
 * `onAuthorized` runs once the caller may call the operation, before its input is validated.
 */
export function installSecurity(
  api: OpenAPIBackend,
  document: Document,
  config: TrellisConfig,
  logger: Logger,
  onAuthorized: (req: Request) => void = () => undefined,
): void {
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

  const schemes = (document.components?.securitySchemes ?? {}) as Record<
    string,
    { type?: string; scheme?: string }
  >;
  for (const [name, scheme] of Object.entries(schemes)) {
    const kind = scheme.type === 'http' ? scheme.scheme?.toLowerCase() : undefined;
    if (kind !== 'basic' && kind !== 'bearer') continue;
    const authenticate = authenticators[kind];
    if (!authenticate) continue;
    const prefix = new RegExp(`^${kind}\\s`, 'i');
    api.registerSecurityHandler(name, async (_context: Context, req: Request) => {
      const header = req.headers.authorization;
      if (!header || !prefix.test(header)) return false;
      try {
        req.user = await authenticate(header);
        return req.user;
      } catch (error) {
        return { error };
      }
    });
  }

  api.register('unauthorizedHandler', (context: Context, req: Request) => {
    const reasons = Object.values(context.security)
      .map((result: unknown) => (result as { error?: unknown } | null)?.error)
      .filter((error): error is ApiError => error instanceof ApiError)
      .flatMap((error) => error.messages);
    const header = req.headers.authorization;
    const messages =
      reasons.length > 0
        ? reasons
        : header
          ? [`The Authorization scheme is not accepted; use ${acceptedSchemes(config)}.`]
          : [`Authentication is required (${acceptedSchemes(config)}).`];
    throw new ApiError(401, messages, challenge ? { 'WWW-Authenticate': challenge } : {});
  });

  api.register('postSecurityHandler', (context: Context, req: Request) => {
    const isPublic = (context.operation.security ?? []).every(
      (requirement) => Object.keys(requirement).length === 0,
    );
    if (!isPublic) {
      // Not authenticated: the unauthorizedHandler answers 401 next.
      if (!context.security['authorized'] || !req.user) return;
      assertAllowed(req.user, allowedRoles(context.operation as { path: string }));
    }
    onAuthorized(req);
  });
}

function acceptedSchemes(config: TrellisConfig): string {
  const names = [
    config.Security.Basic.Enabled ? 'Basic' : null,
    config.Security.Bearer.Enabled ? 'Bearer' : null,
  ].filter((name) => name !== null);
  return names.length > 0 ? names.join(' or ') : 'no scheme is enabled';
}
