import type { Kysely } from 'kysely';
import * as executionRepository from '#store/execution-repository.js';
import type { Database } from '#store/tables.js';
import type { Logger } from '#platform/logging.js';

/** Executions whose claim by a reset run this process remembers (each claim is one write). */
const MAX_REMEMBERED = 1000;

/**
 * A run an operator reset from the Temporal UI or CLI runs again the tasks after its reset point
 * and names itself in every activity's input (`run`): before it writes, it takes the execution
 * over from the run before it (`claimForRun`), once. Runs that were not reset name no run and
 * pay nothing for this.
 */
export function createRunClaims(db: Kysely<Database>, logger: Logger) {
  const claimed = new Set<string>();
  return async function claim(
    executionId: string,
    run: string | undefined,
    options: { fromStart?: boolean } = {},
  ): Promise<void> {
    if (run === undefined) return;
    const key = `${executionId}/${run}`;
    if (claimed.has(key)) return;
    const fromStart = options.fromStart === true;
    if (await executionRepository.claimForRun(db, executionId, run, { fromStart })) {
      logger.info(
        { executionId, temporalRunId: run, fromStart },
        'a Temporal run reset by an operator took the execution over',
      );
    }
    claimed.add(key);
    if (claimed.size > MAX_REMEMBERED) claimed.delete(claimed.values().next().value!);
  };
}

export type RunClaims = ReturnType<typeof createRunClaims>;

/** A log entry's dedupe key, kept apart from the earlier run's entries in a reset run. */
export function runKey(run: string | undefined, key: string): string {
  return run === undefined ? key : `${run}:${key}`;
}
