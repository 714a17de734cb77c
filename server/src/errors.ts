import { randomUUID } from 'node:crypto';
import type { ErrorRequestHandler } from 'express';
import { loggablePath, type Req, type Res } from './request-context.js';
import { TrellisError, type Problem, type TrellisErrorCode } from '../../core/src/errors.js';
import type { Logger } from '../../core/src/logging.js';
import { sendErrorEnvelope } from './envelope.js';

/**
 * A failure only HTTP knows: no or bad credentials (401, with `WWW-Authenticate`), a wrong role
 * (403), a route or method the API does not serve (404, 405), a body that cannot be read (400,
 * 413, 415). What goes wrong in the domain is core's `TrellisError` instead.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly messages: string[];
  /** The messages with stable codes (`auth.unauthenticated`, `route.not_found`, ...). */
  readonly problems: Problem[];
  /** Extra response headers, e.g. `WWW-Authenticate` on 401. */
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    messages: string | readonly string[] | readonly Problem[],
    headers: Record<string, string> = {},
  ) {
    const list = typeof messages === 'string' ? [messages] : [...messages];
    const problems = list.map((item) =>
      typeof item === 'string' ? { code: codeOfStatus(status), message: item } : item,
    );
    super(problems.map((problem) => problem.message).join('; '));
    this.name = 'HttpError';
    this.status = status;
    this.problems = problems;
    this.messages = problems.map((problem) => problem.message);
    this.headers = headers;
  }
}

/** The stable code of a failure only HTTP knows, by its status (README, "Error codes"). */
function codeOfStatus(status: number): string {
  switch (status) {
    case 400:
      return 'request.malformed';
    case 401:
      return 'auth.unauthenticated';
    case 403:
      return 'auth.forbidden';
    case 404:
      return 'route.not_found';
    case 405:
      return 'route.method_not_allowed';
    case 413:
      return 'request.too_large';
    case 415:
      return 'request.unsupported_media_type';
    case 429:
      return 'auth.rate_limited';
    default:
      return 'internal';
  }
}

/** The one mapping of domain errors to HTTP statuses (docs/ARCHITECTURE.md#api-conventions). */
const statusOfDomainError = {
  invalid: 400,
  not_found: 404,
  conflict: 409,
  unavailable: 503,
} as const satisfies Record<TrellisErrorCode, number>;

/** 404 for a path no operation serves (or a disabled one, like `/health`). */
export function routeNotFound(method: string, path: string): HttpError {
  return new HttpError(404, `No route matches ${method.toUpperCase()} ${path}.`);
}

/**
 * 413 for a body past `Server.BodyLimitBytes`. The connection closes with it: the rest of the
 * body is never read.
 */
export function bodyTooLarge(bodyLimitBytes: number): HttpError {
  return new HttpError(
    413,
    `The request body is larger than ${bodyLimitBytes} bytes (Server.BodyLimitBytes): send a smaller one.`,
    { Connection: 'close' },
  );
}

/** The fields body-parser (and http-errors) put on the errors it raises. */
interface HttpLikeError {
  type?: string;
  status?: number;
  limit?: number;
  message?: string;
}

/**
 * Turns anything thrown while handling a request into the `HttpError` a client may see: domain
 * errors get their status, body-parser's failures become 400/413/415; anything unknown becomes
 * null (a bug → 500).
 */
export function toHttpError(error: unknown, bodyLimitBytes: number): HttpError | null {
  if (error instanceof HttpError) return error;
  if (error instanceof TrellisError) {
    return new HttpError(statusOfDomainError[error.code], error.problems);
  }
  const httpError = (typeof error === 'object' && error !== null ? error : {}) as HttpLikeError;
  switch (httpError.type) {
    case 'entity.parse.failed':
      return new HttpError(
        400,
        `The request body is not valid JSON: ${httpError.message ?? ''}`.trim(),
      );
    case 'entity.too.large':
      return bodyTooLarge(bodyLimitBytes);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new HttpError(415, httpError.message ?? 'Unsupported request body encoding.');
    case 'request.aborted':
      return new HttpError(400, 'The request was aborted.');
    default:
      return null;
  }
}

/**
 * The one place that renders errors: every failure leaves as the envelope. Unknown errors are
 * logged with their stack under an id and the client sees only the id. A failure after the
 * response started (a stream) can only end the connection.
 */
export function renderError(
  logger: Logger,
  bodyLimitBytes: number,
): (error: unknown, req: Req, res: Res) => void {
  return (error, req, res) => {
    const httpError = toHttpError(error, bodyLimitBytes);
    if (res.headersSent) {
      if (!httpError) logger.error({ err: error, requestId: req.requestId }, 'unhandled error');
      req.socket.destroy();
      return;
    }
    if (httpError) {
      // What is down, and why, is for operators: the answer names neither paths nor addresses.
      if (httpError.status === 503) {
        logger.warn({ err: error, requestId: req.requestId }, 'a dependency is unavailable');
      }
      sendErrorEnvelope(res, httpError.status, httpError.problems, httpError.headers);
      return;
    }
    const errorId = randomUUID();
    logger.error(
      {
        err: error,
        errorId,
        requestId: req.requestId,
        method: req.method,
        path: loggablePath(req),
      },
      'unhandled error',
    );
    sendErrorEnvelope(res, 500, [{ code: 'internal', message: `Internal error (id ${errorId}).` }]);
  };
}

/** {@link renderError} as Express' error middleware (the documentation pages are Express'). */
export function renderErrors(logger: Logger, bodyLimitBytes: number): ErrorRequestHandler {
  const render = renderError(logger, bodyLimitBytes);
  return (error: unknown, req, res, _next) => render(error, req, res);
}
