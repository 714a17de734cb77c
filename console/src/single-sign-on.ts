/**
 * Single sign-on with OpenID Connect: the authorization code flow with PKCE, the console a public
 * client of the provider `GET /auth/oidc` names. The browser leaves for the provider's sign-in
 * page and comes back to `/ui/auth/callback` with a code, which it exchanges for an ID token: the
 * session's Bearer credential until the token expires. What the round trip needs (the PKCE
 * verifier, state and nonce) waits in this tab's sessionStorage.
 */
import * as oauth from 'oauth4webapi';
import type { components } from '@trellis/sdk';
import { base } from './router.js';
import { anonymousClient, signIn, type Session } from './session.js';

type SingleSignOn = components['schemas']['SingleSignOn'];
/** Single sign-on as configured: every field given. */
export type Provider = Required<SingleSignOn>;

/** Where the provider sends the browser back, within the console. */
export const callbackPath = '/auth/callback';

const pendingKey = 'trellis-console-sign-on';

interface Pending {
  verifier: string;
  state: string;
  nonce: string;
  /** The console path to go back to once signed in. */
  returnTo: string;
}

const redirectUri = () => `${location.origin}${base}${callbackPath}`;

/** The configured provider; null when single sign-on is not configured. */
export async function singleSignOnProvider(): Promise<Provider | null> {
  const settings = await anonymousClient().GET('/auth/oidc');
  return settings.enabled ? (settings as Provider) : null;
}

async function discover(provider: Provider): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(provider.issuer);
  const response = await oauth.discoveryRequest(issuer, {
    // A provider on plain http is a local test's; the browser shows the address either way.
    [oauth.allowInsecureRequests]: issuer.protocol === 'http:',
  });
  return oauth.processDiscoveryResponse(issuer, response);
}

/** Leaves for the provider's sign-in page; it sends the browser back to `callbackPath`. */
export async function startSingleSignOn(provider: Provider, returnTo: string): Promise<void> {
  const server = await discover(provider);
  if (!server.authorization_endpoint) {
    throw new Error(`${provider.displayName} names no authorization endpoint.`);
  }
  const pending: Pending = {
    verifier: oauth.generateRandomCodeVerifier(),
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    returnTo,
  };
  const url = new URL(server.authorization_endpoint);
  for (const [name, value] of Object.entries({
    client_id: provider.clientId,
    redirect_uri: redirectUri(),
    response_type: 'code',
    scope: provider.scopes,
    code_challenge: await oauth.calculatePKCECodeChallenge(pending.verifier),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  })) {
    url.searchParams.set(name, value);
  }
  sessionStorage.setItem(pendingKey, JSON.stringify(pending));
  location.assign(url.href);
}

/**
 * Finishes the sign-in the provider sent the browser back from: checks its answer, exchanges the
 * code for the ID token and signs in with it. Rejects with what to tell the user.
 */
export async function finishSingleSignOn(): Promise<{ session: Session; returnTo: string }> {
  const saved = sessionStorage.getItem(pendingKey);
  sessionStorage.removeItem(pendingKey);
  const provider = await singleSignOnProvider();
  if (saved === null || provider === null) {
    throw new Error('This sign-in was not started from this tab, or has been used. Sign in again.');
  }
  const pending = JSON.parse(saved) as Pending;
  const server = await discover(provider);
  const client: oauth.Client = { client_id: provider.clientId };
  const options = { [oauth.allowInsecureRequests]: new URL(provider.issuer).protocol === 'http:' };
  let token: string;
  let expiresAt: number;
  try {
    const answer = oauth.validateAuthResponse(
      server,
      client,
      new URL(location.href),
      pending.state,
    );
    const response = await oauth.authorizationCodeGrantRequest(
      server,
      client,
      oauth.None(),
      answer,
      redirectUri(),
      pending.verifier,
      options,
    );
    const result = await oauth.processAuthorizationCodeResponse(server, client, response, {
      expectedNonce: pending.nonce,
      requireIdToken: true,
    });
    const claims = oauth.getValidatedIdTokenClaims(result);
    if (!result.id_token || !claims) throw new Error('The provider gave no ID token.');
    token = result.id_token;
    expiresAt = claims.exp * 1000;
  } catch (error) {
    const described =
      error instanceof oauth.AuthorizationResponseError
        ? (error.error_description ?? error.error)
        : (error as Error).message;
    throw new Error(`Signing in with ${provider.displayName} failed: ${described}`, {
      cause: error,
    });
  }
  const session = await signIn(
    { kind: 'sso', token, expiresAt, provider: provider.displayName },
    true,
  );
  return { session, returnTo: pending.returnTo };
}
