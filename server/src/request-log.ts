import type { RequestHandler } from 'express';
import type { Logger } from '../../core/src/logging.js';

/**
 * One structured line per request: method, path (without the query), status, duration and
 * the authenticated user. Never headers, credentials or bodies.
 */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const status = res.statusCode;
      // The line is built only when it will be written (APIs usually run at level warn).
      if (status < 500 && !logger.isLevelEnabled('info')) return;
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const line = {
        method: req.method,
        path: req.originalUrl.split('?')[0],
        status,
        durationMs: Math.round(durationMs * 100) / 100,
        user: req.user?.name ?? null,
      };
      if (status >= 500) logger.error(line, 'request');
      else logger.info(line, 'request');
    });
    next();
  };
}
