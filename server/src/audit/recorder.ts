import type { Kysely } from 'kysely';
import { appendEntries, type NewAuditEntry } from '#store/audit-repository.js';
import type { Database } from '#store/tables.js';
import type { Logger } from '#platform/logging.js';

/** Where audit entries go: the database's chain, then one log line each for a SIEM. */
export interface AuditRecorder {
  /** Resolves once the entry is stored; a response may then report what it records. */
  record(entry: NewAuditEntry): Promise<void>;
}

interface Waiting {
  entry: NewAuditEntry;
  stored: () => void;
  failed: (error: unknown) => void;
}

/**
 * Appends entries in group commits: one INSERT at a time per process, holding every entry that
 * arrived while the one before was written. Appends are serialised by the database anyway (the
 * chain's lock); this makes concurrent requests share a statement rather than queue for the lock.
 * The log lines are written at `info` whatever `Logging.Level` says, unless it is `silent`.
 */
export function createAuditRecorder(db: Kysely<Database>, logger: Logger): AuditRecorder {
  const log = logger.child(
    { component: 'audit' },
    { level: logger.level === 'silent' ? 'silent' : 'info' },
  );
  let waiting: Waiting[] = [];
  let writing = false;

  async function writeWaiting(): Promise<void> {
    writing = true;
    while (waiting.length > 0) {
      const batch = waiting;
      waiting = [];
      try {
        const stored = await appendEntries(
          db,
          batch.map(({ entry }) => entry),
        );
        batch.forEach(({ entry, stored: done }, index) => {
          log.info({ audit: { ...stored[index], ...entry } }, 'audit');
          done();
        });
      } catch (error) {
        logger.error({ err: error, entries: batch.length }, 'cannot append to the audit trail');
        for (const { failed } of batch) failed(error);
      }
    }
    writing = false;
  }

  return {
    record(entry) {
      return new Promise((stored, failed) => {
        waiting.push({ entry, stored, failed });
        if (!writing) void writeWaiting();
      });
    },
  };
}
