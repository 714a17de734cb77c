/**
 * Signing in: Basic credentials, a pasted Bearer token or single sign-on's ID token, checked with
 * `GET /me`, which also says the projects the user may work in and its roles in each. Credentials
 * live in memory, and in this tab's sessionStorage only when the user asks or signed in with
 * single sign-on (never localStorage, never a cookie); signing out forgets them. The project the
 * user works in is kept in this tab's sessionStorage too, so that a reload stays in it.
 */
import {
  createTrellisClient,
  TrellisApiError,
  type TrellisClient,
  type components,
} from '@trellis/sdk';

export type CurrentUser = components['schemas']['CurrentUser'];
/** A project the user may work in, with its roles there. */
export type ProjectChoice = components['schemas']['CurrentUserProject'];

export type Credentials =
  | { kind: 'basic'; username: string; password: string }
  | { kind: 'bearer'; token: string }
  /** Single sign-on's ID token, sent as a Bearer token until it expires (epoch ms). */
  | { kind: 'sso'; token: string; expiresAt: number; provider: string };

export interface Session {
  /** A client working in `project`. */
  client: TrellisClient;
  /** The user, with its roles in `project`. */
  user: CurrentUser;
  /** The project the console works in: null when Trellis lists none (it predates projects). */
  project: ProjectChoice | null;
  credentials: Credentials;
  /** When a single sign-on session ends, and with which provider to sign in again. */
  expires?: { at: number; provider: string };
}

const storageKey = 'trellis-console-credentials';
const projectKey = 'trellis-console-project';

/**
 * Requests without the browser's own credentials: the console sends `Authorization` itself, and
 * a 401 must come back to the page rather than make the browser ask for a password in its own
 * dialog (which it does for same-origin requests that may carry credentials).
 */
const fetchWithoutBrowserCredentials = (request: Request) =>
  fetch(new Request(request, { credentials: 'omit' }));

export function clientFor(credentials: Credentials, project?: string): TrellisClient {
  return createTrellisClient({
    baseUrl: location.origin,
    fetch: fetchWithoutBrowserCredentials,
    ...(project === undefined ? {} : { project }),
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
  const session: Session = {
    client,
    user,
    project: null,
    credentials,
    ...(credentials.kind === 'sso'
      ? { expires: { at: credentials.expiresAt, provider: credentials.provider } }
      : {}),
  };
  const projects = user.projects ?? [];
  const kept = sessionStorage.getItem(projectKey);
  const chosen =
    projects.find((project) => project.id === kept) ??
    projects.find((project) => project.name === 'default') ??
    projects[0];
  return chosen ? inProject(session, chosen) : session;
}

/** The session working in `project` (one of the user's): its client, and the roles there. */
export function inProject(session: Session, project: ProjectChoice): Session {
  sessionStorage.setItem(projectKey, project.id);
  return {
    ...session,
    project,
    client: clientFor(session.credentials, project.id),
    user: { ...session.user, roles: project.roles },
  };
}

function signInProblem(error: unknown, credentials: Credentials): string {
  if (!(error instanceof TrellisApiError)) {
    return 'Trellis could not be reached. Check that it runs, then try again.';
  }
  if (credentials.kind === 'sso' && error.status !== 403) {
    return error.status === 404
      ? `You signed in with ${credentials.provider}, but you are not a member of any project of this Trellis: ask an administrator to add you, or a group of yours, as a member.`
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
  sessionStorage.removeItem(projectKey);
}

/** Whether the user may use the console's pages (workflows, runs, approvals) in its project. */
export const canUseWorkflows = (user: CurrentUser) =>
  user.roles.includes('admin') || user.roles.includes('workflow');

/** Whether the user manages its project's members and API keys (and reads its audit trail). */
export const isProjectAdmin = (user: CurrentUser) => user.roles.includes('admin');

/** Whether the user may read an audit trail: instance admins, and its project's admins. */
export const canReadAudit = (user: CurrentUser) =>
  user.instanceAdmin === true || isProjectAdmin(user);

/** Whether the user manages its project's plugin configurations (`config` or `admin`). */
export const canConfigure = (user: CurrentUser) =>
  user.roles.includes('admin') || user.roles.includes('config');

/** Whether the user reads the plugin catalog and installs or removes plugins (`plugins` or `admin`). */
export const canManagePlugins = (user: CurrentUser) =>
  user.roles.includes('admin') || user.roles.includes('plugins');
