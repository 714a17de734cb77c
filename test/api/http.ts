import { expect } from 'vitest';
import { basicAuthorization } from '../../sdk/src/index.js';
import { users, type TestUser } from '../support/harness.js';

export interface RawResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

/**
 * A plain HTTP call for what the SDK cannot send on purpose: malformed JSON, other content
 * types, oversized bodies, unknown routes. Authenticated as `as` (default admin) unless null.
 */
export async function sendRaw(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: string | Uint8Array; contentType?: string; as?: TestUser | null } = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = {};
  const user = options.as === undefined ? 'admin' : options.as;
  if (user) headers.authorization = basicAuthorization(users[user].username, users[user].password);
  if (options.contentType) headers['content-type'] = options.contentType;
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON (e.g. the docs page)
  }
  return { status: response.status, headers: response.headers, body };
}

/** Asserts a raw call was refused with `status` and the error envelope (`data: null`). */
export async function expectRawFailure(response: Promise<RawResponse>, status: number) {
  expect(await response).toMatchObject({ status, body: { data: null, succeeded: false } });
}
