/**
 * Signing in: Basic credentials, a pasted Bearer token or single sign-on's ID token, checked with
 * `GET /me`, which also says the user's roles. Credentials live in memory, and in this tab's
 * sessionStorage only when the user asks or signed in with single sign-on (never localStorage,
 * never a cookie); signing out forgets them.
 */
import {
  createTrellisClient,
  TrellisApiError,
  type TrellisClient,
  type components,
} from '@trellis/sdk';

export type CurrentUser = components['schemas']['CurrentUser'];

export type Credentials =
  | { kind: 'basic'; username: string; password: string }
  | { kind: 'bearer'; token: string }
  /** Single sign-on's ID token, sent as a Bearer token until it expires (epoch ms). */
  | { kind: 'sso'; token: string; expiresAt: number; provider: string };

export interface Session {
  client: TrellisClient;
  user: CurrentUser;
  /** When a single sign-on session ends, and with which provider to sign in again. */
  expires?: { at: number; provider: string };
}

const storageKey = 'trellis-console-credentials';

/**
 * Requests without the browser's own credentials: the console sends `Authorization` itself, and
 * a 401 must come back to the page rather than make the browser ask for a password in its own
 * dialog (which it does for same-origin requests that may carry credentials).
 */
const fetchWithoutBrowserCredentials = (request: Request) =>
  fetch(new Request(request, { credentials: 'omit' }));

export function clientFor(credentials: Credentials): TrellisClient {
  return createTrellisClient({
    baseUrl: location.origin,
    fetch: fetchWithoutBrowserCredentials,
    ...(credentials.kind === 'basic'
      ? { basic: { username: credentials.username, password: credentials.password } }
      : { bearer: credentials.token }),
  });
}

/** What the sign-in page says of a single sign-on session that ended. */
export const expiredNotice = (provider: string) =>
  `Your sign-in with ${provider} has expired. Sign in again.`;

/** A client without credentials, for the public calls (an approval link's). */
export function anonymousClient(): TrellisClient {
  return createTrellisClient({ baseUrl: location.origin, fetch: fetchWithoutBrowserCredentials });
}

/** Checks the credentials and starts a session; rejects with what to tell the user. */
export async function signIn(credentials: Credentials, remember: boolean): Promise<Session> {
  const client = clientFor(credentials);
  let user: CurrentUser;
  try {
    user = await client.GET('/me');
  } catch (error) {
    throw new Error(signInProblem(error, credentials), { cause: error });
  }
  if (remember) sessionStorage.setItem(storageKey, JSON.stringify(credentials));
  else sessionStorage.removeItem(storageKey);
  return credentials.kind === 'sso'
    ? { client, user, expires: { at: credentials.expiresAt, provider: credentials.provider } }
    : { client, user };
}

function signInProblem(error: unknown, credentials: Credentials): string {
  if (!(error instanceof TrellisApiError)) {
    return 'Trellis could not be reached. Check that it runs, then try again.';
  }
  if (credentials.kind === 'sso' && error.status !== 403) {
    return error.status === 404
      ? `You signed in with ${credentials.provider}, but you are not a member of this Trellis's default project: ask an administrator to add you, or a group of yours, as a member.`
      : `You signed in with ${credentials.provider}, but Trellis did not accept the token: ${error.messages.join(' ')}`;
  }
  switch (error.status) {
    case 401:
      return 'These credentials were not accepted. Check the user name and password, or the token.';
    case 403:
      return 'These credentials carry no role: ask an administrator for the workflow role.';
    default:
      return error.messages.join(' ');
  }
}

/**
 * The session kept in this tab, if the user asked to stay signed in or signed in with single
 * sign-on; null otherwise, or what to tell of a single sign-on session that expired meanwhile.
 */
export async function restoreSession(): Promise<Session | { expired: string } | null> {
  const saved = sessionStorage.getItem(storageKey);
  if (saved === null) return null;
  const credentials = JSON.parse(saved) as Credentials;
  if (credentials.kind === 'sso' && credentials.expiresAt <= Date.now()) {
    sessionStorage.removeItem(storageKey);
    return { expired: expiredNotice(credentials.provider) };
  }
  try {
    return await signIn(credentials, true);
  } catch {
    sessionStorage.removeItem(storageKey);
    return null;
  }
}

export function forgetSession(): void {
  sessionStorage.removeItem(storageKey);
}

/** Whether the user may use the console's pages (workflows, runs, approvals). */
export const canUseWorkflows = (user: CurrentUser) =>
  user.roles.includes('admin') || user.roles.includes('workflow');
