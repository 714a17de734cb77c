import { randomUUID } from 'node:crypto';
import type { ErrorRequestHandler } from 'express';
import { loggablePath, type Req, type Res } from './request-context.js';
import { TooMany, TrellisError, type TrellisErrorCode } from '#definition/errors.js';
import type { Logger } from '#platform/logging.js';
import { sendErrorEnvelope } from './envelope.js';
import { HttpError } from './http-error.js';

/** The one mapping of domain errors to HTTP statuses (docs/ARCHITECTURE.md#api-conventions). */
const statusOfDomainError = {
  invalid: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_many: 429,
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
  if (error instanceof TooMany) {
    return new HttpError(429, error.problems, {
      'Retry-After': String(error.retryAfterSeconds),
    });
  }
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
