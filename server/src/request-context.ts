import { randomUUID } from 'node:crypto';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { IncomingMessage, ServerResponse } from 'node:http';
import parseUrl from 'parseurl';
import type { Logger } from '#platform/logging.js';
import { withoutLinkSignature } from '#application/notifications/approval-links.js';
import type { Metrics } from '#platform/observability/metrics.js';
import type { AuthUser } from './auth/user.js';
import type { RequestProject } from './projects/request-project.js';
import { HttpError } from './http-error.js';

/**
 * What every request carries from its first middleware to its last line of log: its id (the
 * caller's `X-Request-Id`, or one made here, echoed on the response), the contract operation it
 * matched, its logger, and, with tracing on, its server span. When it is answered: one log line,
 * the request metrics, the span's end.
 */

export const requestIdHeader = 'X-Request-Id';

/** Up to 128 characters that need no quoting anywhere: UUIDs, ULIDs, proxies' hex ids, `a.b:c`. */
const requestIdPattern = /^[A-Za-z0-9._:+/=@-]{1,128}$/;

/** The operation of the contract a request matched (`operationId`, path template). */
export interface MatchedOperation {
  operationId?: string;
  path: string;
}

// The API serves requests on Node's own request objects (Express only serves the documentation
// pages): what the pipeline learns about a request lives on it.
declare module 'http' {
  interface IncomingMessage {
    /** The request's id: the caller's valid `X-Request-Id`, or a UUID made for it. */
    requestId: string;
    /** The URL's path, as received (percent-encoded, no query string): Express' `req.path`. */
    path: string;
    /** The operation of the contract the request matched, once routed. */
    operation?: MatchedOperation;
    /**
     * Set once the request is authenticated, with its roles in the request's project (or its
     * instance-wide roles); absent on public operations.
     */
    user?: AuthUser;
    /** The caller as authenticated, with its configured roles; absent on public operations. */
    caller?: AuthUser;
    /** The project the request works in; absent on public and instance-wide operations. */
    project?: RequestProject;
    /** The parsed JSON body, when the request has one. */
    body?: unknown;
  }
}

/** A request as the pipeline holds it. */
export type Req = IncomingMessage;

/** The caller as authenticated (its configured roles), which the authorizer always records. */
export function callerOf(req: Req): AuthUser {
  if (!req.caller) throw new Error('An authenticated operation ran without its caller');
  return req.caller;
}

/** Its response. */
export type Res = ServerResponse;
/** The next step of a request (or the error that ends it). */
export type Next = (error?: unknown) => void;

/** A request header's value (the first, if it came more than once); `name` in lower case. */
export function header(req: Req, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Requests whose `X-Request-Id` is unusable: refused (400) once the caller is authenticated. */
const badRequestIds = new WeakMap<Req, string>();

/** 400 when the request's `X-Request-Id` is unusable (it got a new id, sent back with the 400). */
export function rejectBadRequestId(req: Req): void {
  const given = badRequestIds.get(req);
  if (given === undefined) return;
  const shown = given.length > 40 ? `${given.slice(0, 40)}…` : given;
  throw new HttpError(400, [
    {
      code: 'request.invalid_request_id',
      message: `must be 1 to 128 letters, digits or . _ : + / = @ -, not ${JSON.stringify(shown)}`,
      path: `header.${requestIdHeader}`,
    },
  ]);
}

/** The token of an approval link's path (`/approvals/decide/{token}`, the console's `/ui/decide/{token}`). */
const approvalLinkToken = /(\/decide\/)([^/]+)/gi;

/**
 * The request's path as logs and traces show it: an approval link's token is a credential
 * (whoever holds it decides the approval), so its signature is cut.
 */
export function loggablePath(req: Req): string {
  return req.path.replace(
    approvalLinkToken,
    (_whole, prefix: string, token: string) => `${prefix}${withoutLinkSignature(decoded(token))}`,
  );
}

/** A path segment percent-decoded, as the router gives it to handlers; as it is when malformed. */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

const loggers = new WeakMap<Req, Logger>();

const unTraced = new Set(['/livez', '/readyz', '/metrics']);

/** The request's logger: every line carries its `requestId` (and its operation, once routed). */
export function requestLogger(req: Req, base: Logger): Logger {
  let logger = loggers.get(req);
  if (!logger) {
    logger = base.child({ requestId: req.requestId, operationId: req.operation?.operationId });
    loggers.set(req, logger);
  }
  return logger;
}

/**
 * The first step of every request: its id and path, then, once it is answered, its log line and
 * metrics (and its span's end). Calls `next` inside the request's span when tracing.
 */
export function requestContext(deps: {
  logger: Logger;
  metrics: Metrics;
  tracer?: Tracer;
}): (req: Req, res: Res, next: () => void) => void {
  const { logger, metrics, tracer } = deps;
  const answered = (req: Req, status: number, started: bigint) => {
    const operation = req.operation?.operationId ?? 'other';
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    metrics.observeRequest(operation, req.project?.name ?? '', status, seconds);
    // The line is built only when it will be written (APIs usually run at level warn).
    if (status < 500 && !logger.isLevelEnabled('info')) return;
    const line = {
      requestId: req.requestId,
      operationId: req.operation?.operationId,
      method: req.method,
      path: loggablePath(req),
      status,
      durationMs: Math.round(seconds * 1e5) / 100,
      user: req.user?.name ?? null,
    };
    if (status >= 500) logger.error(line, 'request');
    else logger.info(line, 'request');
  };
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    req.path = parseUrl(req)?.pathname ?? '/';
    const given = req.headers['x-request-id'];
    if (typeof given === 'string' && requestIdPattern.test(given)) {
      req.requestId = given;
    } else {
      req.requestId = randomUUID();
      if (given !== undefined) badRequestIds.set(req, String(given));
    }
    res.setHeader(requestIdHeader, req.requestId);
    res.on('finish', () => answered(req, res.statusCode, started));

    // Probes and scrapes come every few seconds and say nothing about a run: no spans.
    if (!tracer || unTraced.has(req.path)) {
      next();
      return;
    }
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(
      req.method ?? 'GET',
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': req.method,
          'url.path': loggablePath(req),
          'trellis.request_id': req.requestId,
        },
      },
      parent,
    );
    res.on('close', () => endServerSpan(span, req, res.statusCode, res.writableFinished));
    context.with(trace.setSpan(parent, span), next);
  };
}

/** Named `GET /workflows/{workflowId}` (the route template, never the raw path), as OpenTelemetry's HTTP conventions say. */
function endServerSpan(span: Span, req: Req, status: number, finished: boolean): void {
  if (req.operation) {
    span.updateName(`${req.method} ${req.operation.path}`);
    span.setAttribute('http.route', req.operation.path);
    if (req.operation.operationId) {
      span.setAttribute('trellis.operation', req.operation.operationId);
    }
  }
  span.setAttribute('http.response.status_code', status);
  if (!finished) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'The client went away first.' });
  } else if (status >= 500) {
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}
