/**
 * Writing a response body as Express' `res.json` / `res.send` did, on Node's own response: the
 * API's requests never enter Express (its per-request cost — re-prototyping `req` and `res`,
 * its router — was the largest share of a cached GET's CPU), so the answer a client sees is
 * made here, header for header: `Content-Type` with `charset=utf-8`, `Content-Length`, a weak
 * `ETag`, `304 Not Modified` for a GET or HEAD whose `If-None-Match` matches, no body for HEAD.
 */
import type { ServerResponse } from 'node:http';
import etag from 'etag';
import fresh from 'fresh';

/**
 * What every answer carries from the start: no type sniffing, and no cache keeping API data
 * (static files that may be cached say so themselves, `staticFiles`).
 */
export function setDefaultHeaders(res: ServerResponse): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', noStore);
}

export const noStore = 'no-store';

/** Sends `value` as JSON with `status` (and extra headers). */
export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers?: Record<string, string>,
): void {
  sendText(res, status, 'application/json; charset=utf-8', JSON.stringify(value), headers);
}

/** Sends text (`contentType` gets `charset=utf-8`, as Express gives every string body). */
export function sendText(
  res: ServerResponse,
  status: number,
  contentType: string,
  text: string,
  headers?: Record<string, string>,
): void {
  res.statusCode = status;
  if (headers) for (const name in headers) res.setHeader(name, headers[name]!);
  res.setHeader('Content-Type', withUtf8Charset(contentType));
  const body = Buffer.from(text, 'utf8');
  res.setHeader('Content-Length', body.length);
  res.setHeader('ETag', etag(body, { weak: true }));
  const req = res.req;
  const method = req.method;
  if (
    (method === 'GET' || method === 'HEAD') &&
    ((status >= 200 && status < 300) || status === 304) &&
    fresh(req.headers, { etag: res.getHeader('ETag') })
  ) {
    res.statusCode = 304;
  }
  if (res.statusCode === 204 || res.statusCode === 304) {
    res.removeHeader('Content-Type');
    res.removeHeader('Content-Length');
    res.end();
    return;
  }
  // Node sends no body for HEAD itself.
  res.end(body);
}

const charsetPattern = /;\s*charset\s*=[^;]*/i;

/** `type` with its charset set to utf-8. */
function withUtf8Charset(type: string): string {
  if (type === 'application/json; charset=utf-8') return type;
  return charsetPattern.test(type)
    ? type.replace(charsetPattern, '; charset=utf-8')
    : `${type}; charset=utf-8`;
}
