import express from 'express';
import type { RequestHandler } from 'express';
import { noStore } from '../respond.js';

/**
 * `express.static`, whose files keep the caching it (or `setHeaders`) gives them, where every
 * other answer is `no-store`; a path it has no file for falls through as `no-store` again.
 */
export function staticFiles(
  root: string,
  options: Parameters<typeof express.static>[1] = {},
): RequestHandler {
  const serve = express.static(root, options);
  return (req, res, next) => {
    res.removeHeader('Cache-Control');
    serve(req, res, (error?: unknown) => {
      if (!res.headersSent) res.setHeader('Cache-Control', noStore);
      next(error);
    });
  };
}
