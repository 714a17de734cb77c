import { createRemoteJWKSet } from 'jose';
import type { JWTVerifyGetKey } from 'jose';
import { HttpError } from '../http-error.js';

/**
 * The OpenID provider of single sign-on (`Security.Oidc`), as the API sees it: where its signing
 * keys are, found through its discovery document.
 */

/** The URL of an issuer's discovery document (OpenID Connect Discovery 1.0, section 4). */
export const discoveryUrl = (issuer: string) =>
  new URL(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`);

async function discoverJwksUri(issuer: string): Promise<URL> {
  const unreachable = (why: string) =>
    new HttpError(
      401,
      `The identity provider's keys could not be found (${why}); the token cannot be checked now.`,
    );
  const response = await fetch(discoveryUrl(issuer), {
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(10_000),
  }).catch((error: unknown) => {
    throw unreachable(`${discoveryUrl(issuer).href}: ${(error as Error).message}`);
  });
  if (!response.ok) throw unreachable(`${discoveryUrl(issuer).href} answered ${response.status}`);
  const metadata = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  // Discovery requires the document to name exactly the issuer it was asked for.
  if (metadata.issuer !== issuer) {
    throw unreachable(
      `its discovery document names the issuer ${JSON.stringify(metadata.issuer)}, not ${JSON.stringify(issuer)}: configure Security.Oidc.Issuer exactly as the provider names itself`,
    );
  }
  if (typeof metadata.jwks_uri !== 'string') throw unreachable('no jwks_uri in its discovery');
  return new URL(metadata.jwks_uri);
}

/**
 * The issuer's signing keys: discovered on first use and kept (jose refetches the key set for a
 * key id it does not know); discovered again after a failure.
 */
export function discoveredKeys(issuer: string): JWTVerifyGetKey {
  let keys: Promise<JWTVerifyGetKey> | undefined;
  return async (header, token) => {
    keys ??= discoverJwksUri(issuer).then(
      (uri) => createRemoteJWKSet(uri),
      (error: unknown) => {
        keys = undefined;
        throw error;
      },
    );
    return (await keys)(header, token);
  };
}
