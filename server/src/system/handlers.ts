import { readFileSync } from 'node:fs';
import { installPath } from '../../../core/src/install-root.js';
import { routeNotFound } from '../errors.js';
import type { HandlerMap } from '../handler.js';
import { checkHealth } from './health.js';

const packageVersion = (
  JSON.parse(readFileSync(installPath('package.json'), 'utf8')) as {
    version: string;
  }
).version;

/** The public operations: `/health` (no envelope, only when enabled) and `/version`. */
export const systemHandlers = {
  getHealth: async ({ deps, req }) => {
    if (!deps.config.HealthCheck.Enabled) throw routeNotFound(req.method, req.path);
    const report = await checkHealth(deps);
    return { raw: report, status: report.Status === 'Healthy' ? 200 : 503 };
  },
  getVersion: async () => ({ data: { version: packageVersion } }),
} satisfies Partial<HandlerMap>;
