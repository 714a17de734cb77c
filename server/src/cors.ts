import type { RequestHandler } from 'express';

/** The request headers a browser client may send (with its request id and trace context). */
const allowedHeaders =
  'Authorization, Content-Type, Idempotency-Key, Last-Event-ID, X-Request-Id, traceparent, tracestate';
const allowedMethods = 'GET, POST, PUT, DELETE';

/**
 * CORS for the configured origins (`Server.Cors.AllowedOrigins`): a preflight from one of them
 * is answered 204 with what it may send, and its other requests get the headers that let the
 * browser read the answer. Any other origin gets no CORS header at all, so the browser keeps
 * its answers from it; requests without an `Origin` (curl, servers) are unaffected.
 */
export function cors(allowedOrigins: readonly string[]): RequestHandler {
  const allowed = new Set(allowedOrigins.map((origin) => origin.toLowerCase()));
  return (req, res, next) => {
    if (allowed.size === 0) {
      next();
      return;
    }
    // The answer depends on the origin: caches must not hand one origin's answer to another.
    res.vary('Origin');
    const origin = req.headers.origin;
    if (origin === undefined || !allowed.has(origin.toLowerCase())) {
      next();
      return;
    }
    res.setHeader('Access-Control-Allow-Origin', origin);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      res.setHeader('Access-Control-Allow-Methods', allowedMethods);
      res.setHeader('Access-Control-Allow-Headers', allowedHeaders);
      res.setHeader('Access-Control-Max-Age', '600');
      res.status(204).end();
      return;
    }
    res.setHeader('Access-Control-Expose-Headers', 'WWW-Authenticate, X-Request-Id');
    next();
  };
}
