import { randomUUID } from 'node:crypto';
import type { ErrorRequestHandler } from 'express';
import { ApiError } from '../../core/src/errors.js';
import type { Logger } from '../../core/src/logging.js';
import { sendErrorEnvelope } from './envelope.js';

/** 404 for a path no operation serves (or a disabled one, like `/health`). */
export function routeNotFound(method: string, path: string): ApiError {
  return new ApiError(404, `No route matches ${method.toUpperCase()} ${path}.`);
}

/** The fields body-parser (and http-errors) put on the errors it raises. */
interface HttpLikeError {
  type?: string;
  status?: number;
  limit?: number;
  message?: string;
}

/**
 * Turns anything thrown while handling a request into an `ApiError` a client may see:
 * body-parser's failures become 400/413/415; anything unknown becomes null (a bug → 500).
 */
export function toApiError(error: unknown, bodyLimitBytes: number): ApiError | null {
  if (error instanceof ApiError) return error;
  const httpError = (typeof error === 'object' && error !== null ? error : {}) as HttpLikeError;
  switch (httpError.type) {
    case 'entity.parse.failed':
      return new ApiError(
        400,
        `The request body is not valid JSON: ${httpError.message ?? ''}`.trim(),
      );
    case 'entity.too.large':
      return new ApiError(413, `The request body is larger than ${bodyLimitBytes} bytes.`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError(415, httpError.message ?? 'Unsupported request body encoding.');
    case 'request.aborted':
      return new ApiError(400, 'The request was aborted.');
    default:
      return null;
  }
}

/**
 * The one place that renders errors: every failure leaves as the envelope. Unknown errors are
 * logged with their stack under an id and the client sees only the id.
 */
export function renderErrors(logger: Logger, bodyLimitBytes: number): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const apiError = toApiError(error, bodyLimitBytes);
    if (apiError) {
      sendErrorEnvelope(res, apiError.status, apiError.messages, apiError.headers);
      return;
    }
    const errorId = randomUUID();
    logger.error({ err: error, errorId, method: req.method, path: req.path }, 'unhandled error');
    sendErrorEnvelope(res, 500, [`Internal error (id ${errorId}).`]);
  };
}
