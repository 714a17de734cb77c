import { purgeEntries } from '#store/audit-repository.js';
import type { AppDeps } from '../handler.js';

const purgeEveryMs = 6 * 60 * 60 * 1000;

/**
 * Purges audit entries older than `Audit.RetentionDays`: at start, then every six hours. Every
 * API process does it; the purges of several do no harm (each deletes what is past the cutoff).
 */
export function keepAuditRetention(deps: Pick<AppDeps, 'db' | 'config' | 'logger'>): {
  stop(): Promise<void>;
} {
  const days = deps.config.Audit.RetentionDays;
  let running: Promise<void> = Promise.resolve();
  const purge = () => {
    running = purgeEntries(deps.db, days).then(
      (purged) => {
        if (purged > 0) deps.logger.info({ purged, retentionDays: days }, 'audit entries purged');
      },
      (error: unknown) => deps.logger.warn({ err: error }, 'cannot purge audit entries'),
    );
  };
  purge();
  const timer = setInterval(purge, purgeEveryMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
