import { createRemoteJWKSet, errors, jwtVerify } from 'jose';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import type { Role, TrellisConfig } from '#platform/config/types.js';
import { HttpError } from '../http-error.js';
import { CredentialCache } from './credential-cache.js';
import type { LoginGuard } from './login-guard.js';
import type { AuthUser } from './user.js';

const knownRoles: readonly Role[] = ['admin', 'config', 'plugins', 'workflow'];

/** Reads the roles from a claim (a dotted path like `realm_access.roles`), a string or an array. */
export function rolesFromClaims(payload: JWTPayload, claim: string): Role[] {
  let value: unknown = payload;
  for (const key of claim.split('.')) {
    value =
      typeof value === 'object' && value !== null
        ? (value as Record<string, unknown>)[key]
        : undefined;
  }
  const names =
    typeof value === 'string'
      ? value.split(/[\s,]+/)
      : Array.isArray(value)
        ? value.filter((item): item is string => typeof item === 'string')
        : [];
  return knownRoles.filter((role) => names.includes(role));
}

const noSubject =
  'The bearer token has no "sub" claim: Trellis names the bearer by it; have the identity provider issue tokens with a subject.';

/** A client-facing reason for a rejected token; never echoes the token. */
function describeJwtFailure(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'The bearer token has expired.';
  if (error instanceof errors.JWTClaimValidationFailed && error.reason === 'missing') {
    if (error.claim === 'exp') {
      return 'The bearer token has no "exp" claim: Trellis accepts only tokens that expire; have the identity provider issue tokens with an expiry.';
    }
    if (error.claim === 'sub') return noSubject;
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    return `The bearer token's "${error.claim}" claim is invalid (${error.reason}).`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return 'The bearer token signature is invalid.';
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return 'The bearer token is signed with an algorithm that is not accepted.';
  }
  if (error instanceof errors.JWKSNoMatchingKey) return 'No key matches the bearer token.';
  return 'The bearer token is invalid.';
}

/**
 * The name of a token's bearer: its subject after `UsernamePrefix`, or after its issuer and `#`.
 * Never a Basic user's name, nor another issuer's subject's (config checks Basic names).
 */
export function bearerName(
  payload: JWTPayload & { sub: string },
  settings: Pick<TrellisConfig['Security']['Bearer'], 'UsernamePrefix'>,
): string {
  return `${settings.UsernamePrefix ?? `${payload.iss ?? ''}#`}${payload.sub}`;
}

/**
 * Verifies Bearer JWTs: HS256 with `Secret`, RS256/ES256 with keys from `JwksUri`; `exp` (required),
 * `nbf`, `sub` (required), issuer and audience, within `ClockToleranceSeconds`. Verified tokens
 * are cached until the sooner of a minute and their expiry.
 */
export function createBearerAuthenticator(
  settings: TrellisConfig['Security']['Bearer'],
  guard: LoginGuard | null = null,
) {
  const secret = settings.Secret ? new TextEncoder().encode(settings.Secret) : null;
  const jwks = settings.JwksUri ? createRemoteJWKSet(new URL(settings.JwksUri)) : null;
  const algorithms = [...(secret ? ['HS256'] : []), ...(jwks ? ['RS256', 'ES256'] : [])];
  const getKey: JWTVerifyGetKey = async (header, token) => {
    if (header.alg === 'HS256' && secret) return secret;
    if (jwks) return jwks(header, token);
    throw new errors.JOSEAlgNotAllowed('unsupported algorithm');
  };
  const cache = new CredentialCache<AuthUser>();

  return async function authenticateBearer(header: string, address = ''): Promise<AuthUser> {
    const cached = cache.get(header);
    if (cached) {
      guard?.beforeCached(cached.name);
      return cached;
    }
    const token = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    if (!token) throw new HttpError(401, 'The bearer token is missing.');
    // A token names no user until it is verified: only its address can be locked or counted.
    await guard?.beforeVerifying(null, address);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, getKey, {
        algorithms,
        requiredClaims: ['exp', 'sub'],
        clockTolerance: settings.ClockToleranceSeconds,
        ...(settings.Issuer ? { issuer: settings.Issuer } : {}),
        ...(settings.Audience ? { audience: settings.Audience } : {}),
      }));
    } catch (error) {
      await guard?.failed(null, address);
      throw new HttpError(401, describeJwtFailure(error));
    }
    const { sub, exp } = payload;
    // jose saw both claims; an empty subject names no one all the same.
    if (!sub || exp === undefined) throw new HttpError(401, noSubject);
    const user: AuthUser = {
      name: bearerName({ ...payload, sub }, settings),
      roles: rolesFromClaims(payload, settings.RolesClaim),
    };
    cache.set(header, user, exp * 1000);
    return user;
  };
}
