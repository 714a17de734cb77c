import vary from 'vary';
import type { Req, Res } from './request-context.js';

/** The request headers a browser client may send (with its request id and trace context). */
const allowedHeaders =
  'Authorization, Content-Type, Idempotency-Key, Last-Event-ID, X-Request-Id, traceparent, tracestate';
const allowedMethods = 'GET, POST, PUT, DELETE';

/**
 * CORS for the configured origins (`Server.Cors.AllowedOrigins`): a preflight from one of them
 * is answered 204 with what it may send, and its other requests get the headers that let the
 * browser read the answer. Any other origin gets no CORS header at all, so the browser keeps
 * its answers from it; requests without an `Origin` (curl, servers) are unaffected. Says whether
 * it answered the request (a preflight) or the request goes on.
 */
export function cors(
  allowedOrigins: readonly string[],
): (req: Req, res: Res) => 'answered' | 'next' {
  const allowed = new Set(allowedOrigins.map((origin) => origin.toLowerCase()));
  return (req, res) => {
    if (allowed.size === 0) return 'next';
    // The answer depends on the origin: caches must not hand one origin's answer to another.
    vary(res, 'Origin');
    const origin = req.headers.origin;
    if (origin === undefined || !allowed.has(origin.toLowerCase())) return 'next';
    res.setHeader('Access-Control-Allow-Origin', origin);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      res.setHeader('Access-Control-Allow-Methods', allowedMethods);
      res.setHeader('Access-Control-Allow-Headers', allowedHeaders);
      res.setHeader('Access-Control-Max-Age', '600');
      res.statusCode = 204;
      res.end();
      return 'answered';
    }
    res.setHeader('Access-Control-Expose-Headers', 'WWW-Authenticate, X-Request-Id');
    return 'next';
  };
}
