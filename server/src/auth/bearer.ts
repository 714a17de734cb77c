import { createRemoteJWKSet, decodeJwt, errors, jwtVerify } from 'jose';
import type { JWTPayload, JWTVerifyGetKey, JWTVerifyOptions } from 'jose';
import type { Role, TrellisConfig } from '#platform/config/types.js';
import { tokenNamePrefix } from '#platform/config/token-names.js';
import { HttpError } from '../http-error.js';
import { CredentialCache } from './credential-cache.js';
import type { LoginGuard } from './login-guard.js';
import { discoveredKeys } from './oidc.js';
import type { AuthUser } from './user.js';

const knownRoles: readonly Role[] = ['admin', 'config', 'plugins', 'workflow'];

/** The value at a claim's dotted path (`realm_access.roles`). */
function claimAt(payload: JWTPayload, claim: string): unknown {
  let value: unknown = payload;
  for (const key of claim.split('.')) {
    value =
      typeof value === 'object' && value !== null
        ? (value as Record<string, unknown>)[key]
        : undefined;
  }
  return value;
}

/** Reads the roles from a claim (a dotted path like `realm_access.roles`), a string or an array. */
export function rolesFromClaims(payload: JWTPayload, claim: string): Role[] {
  const value = claimAt(payload, claim);
  const names =
    typeof value === 'string'
      ? value.split(/[\s,]+/)
      : Array.isArray(value)
        ? value.filter((item): item is string => typeof item === 'string')
        : [];
  return knownRoles.filter((role) => names.includes(role));
}

/** Reads the groups from a claim (a dotted path): an array of names, or one name. */
export function groupsFromClaims(payload: JWTPayload, claim: string): string[] {
  const value = claimAt(payload, claim);
  const names = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  return [
    ...new Set(names.filter((name): name is string => typeof name === 'string' && name !== '')),
  ];
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
 * The name of a token's bearer: its subject after `UsernamePrefix` (tokens of the Bearer
 * section's issuer), else after its issuer and `#`. Never a Basic user's name, nor another
 * issuer's subject's (config checks Basic names).
 */
export function bearerName(
  payload: JWTPayload & { sub: string },
  settings: Pick<TrellisConfig['Security']['Bearer'], 'Issuer' | 'UsernamePrefix'>,
): string {
  return `${tokenNamePrefix(payload.iss ?? '', settings)}${payload.sub}`;
}

/** One issuer whose tokens the API accepts (or, without `issuer`, any issuer the key signs for). */
interface TokenVerifier {
  issuer: string | undefined;
  getKey: JWTVerifyGetKey;
  options: JWTVerifyOptions;
  rolesClaim: string | undefined;
}

/** The Bearer section's tokens: HS256 with `Secret`, RS256/ES256 with keys from `JwksUri`. */
function bearerVerifier(settings: TrellisConfig['Security']['Bearer']): TokenVerifier {
  const secret = settings.Secret ? new TextEncoder().encode(settings.Secret) : null;
  const jwks = settings.JwksUri ? createRemoteJWKSet(new URL(settings.JwksUri)) : null;
  return {
    issuer: settings.Issuer,
    getKey: async (header, token) => {
      if (header.alg === 'HS256' && secret) return secret;
      if (jwks) return jwks(header, token);
      throw new errors.JOSEAlgNotAllowed('unsupported algorithm');
    },
    options: {
      algorithms: [...(secret ? ['HS256'] : []), ...(jwks ? ['RS256', 'ES256'] : [])],
      ...(settings.Audience ? { audience: settings.Audience } : {}),
    },
    rolesClaim: settings.RolesClaim,
  };
}

/** Single sign-on's ID tokens: issued by `Issuer` to the console (`ClientId`), keys discovered. */
function oidcVerifier(settings: TrellisConfig['Security']['Oidc']): TokenVerifier {
  const issuer = String(settings.Issuer);
  return {
    issuer,
    getKey: discoveredKeys(issuer),
    options: {
      algorithms: ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'],
      audience: String(settings.ClientId),
    },
    rolesClaim: settings.RolesClaim,
  };
}

/**
 * Verifies Bearer JWTs: those of the Bearer section (HS256 with `Secret`, RS256/ES256 with keys
 * from `JwksUri`) and, with single sign-on, ID tokens of `Security.Oidc`'s issuer; `exp`
 * (required), `nbf`, `sub` (required), issuer and audience, within `ClockToleranceSeconds`. A
 * token of the single sign-on issuer carries its groups. Verified tokens are cached until the
 * sooner of a minute and their expiry.
 */
export function createBearerAuthenticator(
  settings: TrellisConfig['Security']['Bearer'],
  guard: LoginGuard | null = null,
  oidc?: TrellisConfig['Security']['Oidc'],
) {
  const verifiers = [
    ...(settings.Enabled ? [bearerVerifier(settings)] : []),
    ...(oidc?.Enabled ? [oidcVerifier(oidc)] : []),
  ];
  // A token is checked by the verifiers of the issuer it names, the first that accepts it winning;
  // one naming no configured issuer by the first, whose refusal says why.
  const verifiersFor = (token: string) => {
    let issuer: string | undefined;
    try {
      issuer = decodeJwt(token).iss;
    } catch {
      issuer = undefined;
    }
    const named = verifiers.filter((verifier) => !verifier.issuer || verifier.issuer === issuer);
    return named.length > 0 ? named : verifiers.slice(0, 1);
  };
  const cache = new CredentialCache<AuthUser>();

  async function verify(token: string): Promise<{ payload: JWTPayload; verifier: TokenVerifier }> {
    let firstError: unknown;
    for (const verifier of verifiersFor(token)) {
      try {
        const { payload } = await jwtVerify(token, verifier.getKey, {
          ...verifier.options,
          requiredClaims: ['exp', 'sub'],
          clockTolerance: settings.ClockToleranceSeconds,
          ...(verifier.issuer ? { issuer: verifier.issuer } : {}),
        });
        return { payload, verifier };
      } catch (error) {
        firstError ??= error;
      }
    }
    throw firstError;
  }

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
    let verified: Awaited<ReturnType<typeof verify>>;
    try {
      verified = await verify(token);
    } catch (error) {
      // The provider's keys out of reach: no fault of the caller's, not counted against it.
      if (error instanceof HttpError) throw error;
      await guard?.failed(null, address);
      throw new HttpError(401, describeJwtFailure(error));
    }
    const { payload, verifier } = verified;
    const { sub, exp } = payload;
    // jose saw both claims; an empty subject names no one all the same.
    if (!sub || exp === undefined) throw new HttpError(401, noSubject);
    const groups =
      oidc?.Enabled && payload.iss === oidc.Issuer
        ? groupsFromClaims(payload, oidc.GroupsClaim)
        : undefined;
    const user: AuthUser = {
      name: bearerName({ ...payload, sub }, settings),
      roles: verifier.rolesClaim ? rolesFromClaims(payload, verifier.rolesClaim) : [],
      ...(groups ? { groups } : {}),
    };
    cache.set(header, user, exp * 1000);
    return user;
  };
}
