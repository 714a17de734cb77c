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

/** Text gathered before it is written: a few syscalls a page, and little held at once. */
const chunkBytes = 64 * 1024;

/**
 * Sends a JSON object whose first key is `data`, a list, writing the list item by item: however
 * large the items add up to be, no string holds more than one of them (or a chunk of small
 * ones), and a slow client is waited for rather than buffered for. The object reads as
 * `JSON.stringify(value)` would, without `Content-Length` or `ETag`.
 */
export async function streamJsonList(
  res: ServerResponse,
  status: number,
  value: { data: readonly unknown[] },
): Promise<void> {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  const { data, ...rest } = value;
  let chunk = '{"data":[';
  const flush = async () => {
    const full = !res.write(chunk);
    chunk = '';
    if (full && !res.destroyed) await drained(res);
  };
  for (const [index, item] of data.entries()) {
    if (res.destroyed) return;
    chunk += (index === 0 ? '' : ',') + JSON.stringify(item);
    if (chunk.length >= chunkBytes) await flush();
  }
  const tail = JSON.stringify(rest);
  chunk += tail === '{}' ? ']}' : `],${tail.slice(1)}`;
  res.end(chunk);
}

/** Resolves when the response can take more, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
