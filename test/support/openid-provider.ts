/**
 * A real OpenID provider (oidc-provider) in-process, for single sign-on tests: its sign-in form
 * takes any login and password (its development interactions) and the login names the account,
 * whose groups the test gives. The console is its one client: public, PKCE required.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export const consoleClientId = 'trellis-console';

export interface OpenIdProvider {
  /** Its issuer URL, `http://127.0.0.1:<port>`. */
  readonly issuer: string;
  /** Serves the provider, with the console's callback at `redirectUri` registered. */
  admit(redirectUri: string): void;
  close(): Promise<void>;
}

/**
 * Listens at once (so Trellis can be configured with the issuer) and serves the provider once
 * `admit` names the console's callback (known once Trellis listens).
 */
export async function startOpenIdProvider(
  groups: Record<string, string[]>,
): Promise<OpenIdProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    admit(redirectUri) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: consoleClientId,
            token_endpoint_auth_method: 'none',
            redirect_uris: [redirectUri],
            grant_types: ['authorization_code'],
            response_types: ['code'],
          },
        ],
        // Lifetimes of its own (the defaults are fine, but announce themselves on every first use).
        ttl: { AccessToken: 600, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
        claims: { openid: ['sub'], profile: ['name'], groups: ['groups'] },
        // The claims in the ID token, as providers configured for groups do (Keycloak, Entra ID).
        conformIdTokenClaims: false,
        findAccount: (_context: unknown, id: string) => ({
          accountId: id,
          claims: () => ({ sub: id, name: id, groups: groups[id] ?? [] }),
        }),
        // The console's scopes are granted without a consent page.
        loadExistingGrant: async (context: ConsentContext) => {
          const { oidc } = context;
          const grant = new oidc.provider.Grant({
            clientId: oidc.client.clientId,
            accountId: oidc.session.accountId,
          });
          grant.addOIDCScope('openid profile groups');
          await grant.save();
          return grant;
        },
      });
      server.on('request', provider.callback());
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface ConsentContext {
  oidc: {
    provider: {
      Grant: new (fields: { clientId: string; accountId: string }) => {
        addOIDCScope(scope: string): void;
        save(): Promise<string>;
      };
    };
    client: { clientId: string };
    session: { accountId: string };
  };
}

/**
 * Signs in as `login` through the provider's own pages, as a browser would (following
 * redirects, keeping its cookies, filling its form): the URL it sends the browser back to.
 */
export async function signInAtProvider(
  authorizationUrl: URL,
  login: string,
  redirectUri: string,
): Promise<URL> {
  const cookies = new Map<string, string>();
  let url = authorizationUrl;
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 20; step += 1) {
    if (url.href.startsWith(redirectUri)) return url;
    const response = await fetch(url, {
      redirect: 'manual',
      method: form ? 'POST' : 'GET',
      headers: {
        cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form ? { body: form.toString() } : {}),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    form = undefined;
    const location = response.headers.get('location');
    if (location) {
      url = new URL(location, url);
      continue;
    }
    const page = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    if (!action) throw new Error(`The provider answered ${response.status}: ${page.slice(0, 500)}`);
    url = new URL(action.replace(/&amp;/g, '&'), url);
    form = new URLSearchParams(
      page.includes('name="login"')
        ? { prompt: 'login', login, password: 'any password' }
        : { prompt: 'consent' },
    );
  }
  throw new Error('The provider did not send the browser back');
}
