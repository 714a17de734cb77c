import { createServer, type ServerResponse } from 'node:http';
import { listen, type Listening } from '../http/listen.js';
import type { Logger } from '../logging.js';
import type { Metrics } from './metrics.js';
import { liveness, type Readiness } from './readiness.js';

/**
 * The HTTP endpoints of a process without an API (`--role worker`), on `Metrics.Host` and
 * `Metrics.WorkerPort`: `/livez`, `/readyz` and, with `Metrics.Enabled`, `/metrics`. They answer
 * exactly as the API's operations of the same paths do.
 */
export async function startProbeServer(deps: {
  host: string;
  port: number;
  metrics: Metrics;
  readiness: Readiness;
  logger: Logger;
}): Promise<Listening> {
  const { metrics, readiness, logger } = deps;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const served = ['/livez', '/readyz', ...(metrics.enabled ? ['/metrics'] : [])];
    if (!served.includes(path ?? '')) {
      json(res, 404, {
        message: `No route matches ${path}; this port serves ${served.join(', ')}.`,
      });
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      json(res, 405, { message: `${req.method} is not allowed on ${path}.` });
      return;
    }
    const answer = async () => {
      if (path === '/livez') return json(res, 200, liveness);
      if (path === '/readyz') {
        const report = await readiness.check();
        return json(res, report.status === 'ok' ? 200 : 503, report);
      }
      const { contentType, text } = await metrics.scrape();
      res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
      res.end(text);
    };
    answer().catch((error: unknown) => {
      logger.error({ err: error, path }, 'probe endpoint failed');
      if (!res.headersSent) json(res, 500, { message: 'Internal error (see the log).' });
      else res.destroy();
    });
  });
  const listening = await listen(server, deps.host, deps.port);
  logger.info({ url: listening.url }, 'worker probes and metrics listening');
  return listening;
}
