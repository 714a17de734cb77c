import type { Middleware } from 'openapi-fetch';

/** The credentials a client sends: HTTP Basic, or a Bearer token (fixed or fetched per request). */
export interface Credentials {
  basic?: { username: string; password: string };
  bearer?: string | (() => string | Promise<string>);
}

/** The `Authorization` header value of HTTP Basic (UTF-8, as RFC 7617 allows). */
export function basicAuthorization(username: string, password: string): string {
  const bytes = new TextEncoder().encode(`${username}:${password}`);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}

/** openapi-fetch middleware that sets `Authorization` on every request; undefined without credentials. */
export function authMiddleware(credentials: Credentials): Middleware | undefined {
  const { basic, bearer } = credentials;
  if (basic && bearer !== undefined)
    throw new TypeError('Give either basic or bearer credentials, not both');
  if (basic) {
    const header = basicAuthorization(basic.username, basic.password);
    return {
      onRequest({ request }) {
        request.headers.set('Authorization', header);
        return request;
      },
    };
  }
  if (bearer !== undefined) {
    return {
      async onRequest({ request }) {
        const token = typeof bearer === 'function' ? await bearer() : bearer;
        request.headers.set('Authorization', `Bearer ${token}`);
        return request;
      },
    };
  }
  return undefined;
}
