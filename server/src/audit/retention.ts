import { purgeEntries } from '#store/audit-repository.js';
import type { AppDeps } from '../handler.js';

const dayMs = 24 * 60 * 60 * 1000;
const purgeEveryMs = dayMs / 4;

/**
 * Purges audit entries older than `Audit.RetentionDays`: at start, then every six hours, or every
 * retention period when it is shorter (no entry outlives twice its retention). Every API process
 * does it; the purges of several do no harm (each deletes what is past the cutoff, and records
 * itself only when it deleted something).
 */
export function keepAuditRetention(deps: Pick<AppDeps, 'db' | 'config' | 'logger'>): {
  stop(): Promise<void>;
} {
  const days = deps.config.Audit.RetentionDays;
  let running: Promise<void> = Promise.resolve();
  // One purge at a time in a process: a slow one delays the next rather than overlapping it.
  const purge = () => {
    running = running
      .then(() => purgeEntries(deps.db, days))
      .then(
        (purged) => {
          if (purged > 0) deps.logger.info({ purged, retentionDays: days }, 'audit entries purged');
        },
        (error: unknown) => deps.logger.warn({ err: error }, 'cannot purge audit entries'),
      );
  };
  purge();
  const timer = setInterval(purge, Math.max(1000, Math.min(purgeEveryMs, days * dayMs)));
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
