import { trellisVersion } from '#platform/install-root.js';
import { liveness } from '#platform/observability/readiness.js';
import { routeNotFound } from '../errors.js';
import type { HandlerMap } from '../handler.js';
import { checkHealth } from './health.js';

/**
 * The public operations: `/health` (no envelope, only when enabled), `/version`, the probes
 * `/livez` and `/readyz` (no envelope, always on) and `/metrics` (Prometheus text, only when
 * enabled).
 */
export const systemHandlers = {
  getHealth: async ({ deps, req }) => {
    if (!deps.config.HealthCheck.Enabled) throw routeNotFound(req.method ?? 'GET', req.path);
    const report = await checkHealth(deps);
    return { raw: report, status: report.Status === 'Healthy' ? 200 : 503 };
  },
  getVersion: async () => ({ data: { version: trellisVersion } }),
  getLiveness: async () => ({ raw: liveness }),
  getReadiness: async ({ deps }) => {
    const report = await deps.readiness.check();
    return { raw: report, status: report.status === 'ok' ? 200 : 503 };
  },
  getMetrics: async ({ deps, req }) => {
    if (!deps.metrics.enabled) throw routeNotFound(req.method ?? 'GET', req.path);
    const { contentType, text } = await deps.metrics.scrape();
    return { raw: text, contentType };
  },
} satisfies Partial<HandlerMap>;
